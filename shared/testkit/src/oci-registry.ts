import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, scriptsDir, startGuarded, waitForPort } from '@brokkr/infra';

const exec = promisify(execFile);

/** Helm's media types for a chart stored in an OCI registry. */
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const HELM_CONFIG = 'application/vnd.cncf.helm.config.v1+json';
const HELM_CHART_LAYER = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';

export interface OciRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  /** `http://127.0.0.1:<port>`: the distribution API (`/v2/…`). */
  origin: string;
  /** The `oci://` repository a source names for charts pushed under `path` (default `charts`). */
  repository(path?: string): string;
  stop(): Promise<void>;
}

export interface StartOciRegistryOptions {
  /**
   * Pulls need a bearer token from the registry's `/token`, which hands one to anyone (a public
   * registry's anonymous pull); pushes stay open.
   */
  token?: boolean;
}

/** tools/oci-registry, built once by scripts/build-oci-registry.sh (cached by its sources' hash). */
async function registryBinary(): Promise<string> {
  const child = exec('bash', [path.join(scriptsDir, 'build-oci-registry.sh')], { maxBuffer: 1024 * 1024 });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  return stdout.trim().split('\n').pop() ?? '';
}

/**
 * A real OCI distribution registry on 127.0.0.1: go-containerregistry's in-memory registry
 * (tools/oci-registry), the code `crane` and `ko` test against. Empty at start; `pushChart` fills it.
 */
export async function startOciRegistry(options: StartOciRegistryOptions = {}): Promise<OciRegistry> {
  const bin = await registryBinary();
  const port = await freePort();
  const server = startGuarded({ command: bin, args: ['-port', String(port), ...(options.token ? ['-token'] : [])] });
  try {
    await Promise.race([
      waitForPort(port),
      server.exited.then(() => {
        throw new Error('oci-registry exited during start-up');
      }),
    ]);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const host = `127.0.0.1:${port}`;
  return { host, origin: `http://${host}`, repository: (p = 'charts') => `oci://${host}/${p}`, stop: () => server.stop() };
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function uploadBlob(registry: OciRegistry, name: string, bytes: Buffer): Promise<string> {
  const digest = sha256(bytes);
  const start = await fetch(`${registry.origin}/v2/${name}/blobs/uploads/`, { method: 'POST' });
  const location = start.headers.get('location');
  if (start.status !== 202 || !location) throw new Error(`blob upload to ${name} not started: ${start.status}`);
  const target = new URL(location, registry.origin);
  target.searchParams.set('digest', digest);
  const put = await fetch(target, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
  if (put.status !== 201) throw new Error(`blob ${digest} not stored in ${name}: ${put.status} ${await put.text()}`);
  return digest;
}

export interface PushedChart {
  /** The `oci://` repository a source names (the chart's name and version go beside it). */
  repository: string;
  /** `sha256:<hex>` of the chart's .tgz (the chart layer). */
  chartDigest: string;
  /** `sha256:<hex>` of the manifest as stored. */
  manifestDigest: string;
  manifest: Buffer;
}

export interface PushArtifact {
  /** The chart's .tgz (the layer). */
  tgz: Buffer;
  name: string;
  version: string;
  /** The repository path in the registry (default `charts`): the chart lands at `<path>/<name>:<version>`. */
  path?: string;
  /** Chart.yaml's content for the config blob (default `{name, version, apiVersion: 'v2'}`). */
  metadata?: Record<string, unknown>;
  /** The layer's media type (default Helm's chart layer); another one makes an artifact that is no chart. */
  layerMediaType?: string;
}

/**
 * Pushes a chart as `helm push` does, over the distribution API: the config and the chart as
 * blobs (monolithic uploads), then the OCI manifest naming them with Helm's media types, tagged
 * with the version (`+` written as `_`, Helm's rule for OCI tags).
 */
export async function pushArtifact(registry: OciRegistry, artifact: PushArtifact): Promise<PushedChart> {
  const { tgz, name, version } = artifact;
  const repoPath = artifact.path ?? 'charts';
  const repo = `${repoPath}/${name}`;
  const config = Buffer.from(JSON.stringify(artifact.metadata ?? { name, version, apiVersion: 'v2' }));
  const configDigest = await uploadBlob(registry, repo, config);
  const chartDigest = await uploadBlob(registry, repo, tgz);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: HELM_CONFIG, digest: configDigest, size: config.length },
      layers: [{ mediaType: artifact.layerMediaType ?? HELM_CHART_LAYER, digest: chartDigest, size: tgz.length }],
    }),
  );
  const tag = version.replaceAll('+', '_');
  const put = await fetch(`${registry.origin}/v2/${repo}/manifests/${tag}`, {
    method: 'PUT',
    headers: { 'content-type': OCI_MANIFEST },
    body: manifest,
  });
  if (put.status !== 201) throw new Error(`manifest ${repo}:${tag} not stored: ${put.status} ${await put.text()}`);
  return { repository: registry.repository(repoPath), chartDigest, manifestDigest: sha256(manifest), manifest };
}

/** pushArtifact with the defaults: the chart at `charts/<name>:<version>`, Helm's media types. */
export function pushChart(registry: OciRegistry, chartTgz: Buffer, name: string, version: string): Promise<PushedChart> {
  return pushArtifact(registry, { tgz: chartTgz, name, version });
}

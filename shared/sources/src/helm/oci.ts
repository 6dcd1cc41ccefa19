import { assertDigest, assertGzip, isSha256Digest, sha256Digest } from '../digest.ts';
import { SourceError } from '../errors.ts';
import type { FetchedSource } from '../fetched.ts';
import type { SourceHttp } from '../http/client.ts';
import type { SourcePolicy } from '../policy.ts';
import type { HelmSpec } from '../spec.ts';
import { registryScheme, RegistrySession } from './registry-session.ts';

/** Helm's media types for a chart pushed to an OCI registry (`helm push`). */
export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const HELM_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.helm.config.v1+json';
export const HELM_CHART_LAYER_MEDIA_TYPE = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';
/** What Helm 3.0–3.7 pushed (Helm still pulls it). */
const LEGACY_CHART_LAYER_MEDIA_TYPE = 'application/tar+gzip';

/** The distribution spec's advice for the largest manifest a registry should accept. */
const MANIFEST_MAX_BYTES = 4 * 1024 * 1024;

interface Descriptor {
  mediaType?: unknown;
  digest?: unknown;
  size?: unknown;
}

interface ChartReference {
  origin: string;
  /** The repository inside the registry: the URL's path, then the chart. */
  name: string;
  /** OCI tags cannot hold `+`; Helm writes it as `_`. */
  tag: string;
}

/** Helm's convention: `oci://host/path` + chart + version is `host/path/chart:version`. */
export function chartReference(spec: HelmSpec, policy: SourcePolicy): ChartReference {
  const url = new URL(spec.repository);
  const path = url.pathname.replace(/^\/+|\/+$/g, '');
  const name = path === '' ? spec.chart : `${path}/${spec.chart}`;
  if (name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new SourceError('invalid_source', `${spec.repository} is not a usable oci:// repository`);
  }
  return { origin: `${registryScheme(url.hostname, policy)}//${url.host}`, name, tag: spec.version.replaceAll('+', '_') };
}

function parseManifest(bytes: Buffer, what: string): { config?: Descriptor; layers?: Descriptor[]; mediaType?: unknown } {
  try {
    const manifest: unknown = JSON.parse(bytes.toString('utf8'));
    if (typeof manifest === 'object' && manifest !== null && !Array.isArray(manifest)) return manifest;
  } catch {
    // refused below
  }
  throw new SourceError('invalid_source', `${what} is not a JSON manifest`);
}

/** The chart layer's descriptor, or invalid_source saying why this is not a Helm chart. */
function chartLayer(bytes: Buffer, what: string, maxBytes: number): { digest: string; size: number } {
  const manifest = parseManifest(bytes, what);
  if (manifest.mediaType !== undefined && manifest.mediaType !== OCI_MANIFEST_MEDIA_TYPE) {
    throw new SourceError('invalid_source', `${what} is a ${String(manifest.mediaType).slice(0, 100)}, not a Helm chart's OCI manifest`);
  }
  if (manifest.config?.mediaType !== HELM_CONFIG_MEDIA_TYPE)
    throw new SourceError('invalid_source', `${what} is not a Helm chart (config media type)`);
  const layers = Array.isArray(manifest.layers) ? manifest.layers : [];
  const layer = layers.find((l) => l?.mediaType === HELM_CHART_LAYER_MEDIA_TYPE || l?.mediaType === LEGACY_CHART_LAYER_MEDIA_TYPE);
  if (!layer || !isSha256Digest(layer.digest))
    throw new SourceError('invalid_source', `${what} has no Helm chart layer with a sha256 digest`);
  const size = typeof layer.size === 'number' ? layer.size : 0;
  if (size > maxBytes)
    throw new SourceError('source_too_large', `the chart is ${size} bytes, larger than ${maxBytes}`, { max_bytes: maxBytes });
  return { digest: layer.digest, size };
}

/** The manifest's own digest; a registry that names another one in Docker-Content-Digest is not believed. */
function manifestDigest(bytes: Buffer, header: string | string[] | undefined, what: string): string {
  const named = Array.isArray(header) ? header[0] : header;
  return isSha256Digest(named) ? assertDigest(bytes, named, what) : sha256Digest(bytes);
}

/**
 * A chart from an OCI registry: the manifest of `<repository>/<chart>:<version>` (pinned by its
 * digest), its Helm chart layer, and that blob, checked against the layer's digest.
 */
export async function fetchFromOciRegistry(http: SourceHttp, spec: HelmSpec, policy: SourcePolicy): Promise<FetchedSource> {
  const ref = chartReference(spec, policy);
  const session = new RegistrySession(http, ref.origin, ref.name);
  const what = `the chart ${spec.chart} ${spec.version}`;
  const manifest = await session.get(`/v2/${ref.name}/manifests/${ref.tag}`, {
    what: `the manifest of ${spec.chart} ${spec.version}`,
    maxBytes: MANIFEST_MAX_BYTES,
    accept: OCI_MANIFEST_MEDIA_TYPE,
  });
  const pinnedManifest = manifestDigest(
    manifest.bytes,
    manifest.headers['docker-content-digest'],
    `the manifest of ${spec.chart} ${spec.version}`,
  );
  const layer = chartLayer(manifest.bytes, `the manifest of ${spec.chart} ${spec.version}`, policy.maxBytes);
  const blob = await session.get(`/v2/${ref.name}/blobs/${layer.digest}`, { what, maxBytes: policy.maxBytes });
  const digest = assertDigest(blob.bytes, layer.digest, what);
  assertGzip(blob.bytes, what);
  return {
    kind: 'helm-chart',
    digest,
    bytes: blob.bytes,
    pinned: { helm: { repository: spec.repository, chart: spec.chart, version: spec.version, digest, manifest_digest: pinnedManifest } },
  };
}

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { directoryEntries, tarGz } from './tar.ts';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/**
 * The shared fixtures (shared/testkit/fixtures): `demo`, a chart with a ConfigMap and a
 * Deployment that use .Values and .Capabilities.KubeVersion.
 */
export const fixtureChartDir = (name = 'demo'): string => path.join(fixtures, 'charts', name);

/** A kustomize tree with `base/` and `overlays/prod/` (name prefix, namespace, a patch, a generator merge). */
export const fixtureKustomizeDir = (name = 'demo'): string => path.join(fixtures, 'kustomize', name);

export interface PackagedChart {
  name: string;
  version: string;
  /** Chart.yaml, parsed (what an index entry and an OCI config blob carry). */
  metadata: Record<string, unknown>;
  /** The .tgz `helm package` would make: every file under `<name>/`. */
  tgz: Buffer;
  /** `sha256:<hex>` of `tgz`. */
  digest: string;
}

/** Packages a chart directory; `version` replaces Chart.yaml's (the same chart as several versions). */
export async function packChart(dir: string, version?: string): Promise<PackagedChart> {
  const metadata = parse(await readFile(path.join(dir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  const name = String(metadata.name);
  const entries = await directoryEntries(dir, name);
  if (version !== undefined) {
    metadata.version = version;
    const chartYaml = entries.find((e) => e.name === `${name}/Chart.yaml`);
    if (chartYaml) chartYaml.body = Buffer.from(stringify(metadata));
  }
  const tgz = tarGz(entries);
  return { name, version: String(metadata.version), metadata, tgz, digest: `sha256:${createHash('sha256').update(tgz).digest('hex')}` };
}

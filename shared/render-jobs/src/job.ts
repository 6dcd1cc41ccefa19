import { createHash } from 'node:crypto';

/** What to render: a chart or an overlay by the digest of its archive in source_blobs, and how (the api's EngineJob). */
export interface RenderJobSpec {
  kind: 'helm' | 'kustomize';
  /** The archive's key in source_blobs (@brokkr/sources). */
  digest: string;
  /** kustomize: the overlay's directory in the archive. */
  path?: string;
  /** Helm: the values over the chart's own. */
  values?: Record<string, unknown>;
  release?: { name: string; namespace: string };
  capabilities?: { kubeVersion: string; apiVersions: string[] };
}

/** A render's outcome as the renderer wrote it: the YAML, or why not (@brokkr/render's reasons). */
export type RenderJobResult = { ok: true; yaml: string } | { ok: false; error: string; reason: string };

/** JSON with every object's keys sorted, so equal jobs hash alike whatever order their values were built in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The job's row key: identical jobs of one tenant for one renderer version share a row, and so one
 * render, however many api requests ask for them at once. The tenant is part of it: two tenants
 * never share a job row, so neither learns when the other renders the same chart.
 */
export function renderJobKey(rendererVersion: string, tenant: string, job: RenderJobSpec): string {
  return createHash('sha256').update(canonical({ rendererVersion, tenant, job })).digest('hex');
}

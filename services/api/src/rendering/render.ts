import { createHash } from 'node:crypto';
import { applyPatches, PatchFailed } from './patches.ts';
import type { RenderInput } from './plan.ts';

/** The engine (@brokkr/render): Helm's and kustomize's own, in sandboxed processes, fair between tenants. */
export interface Engine {
  readonly version: string;
  render(
    tenant: string,
    job: {
      kind: 'helm' | 'kustomize';
      archive: Buffer;
      path?: string;
      values?: Record<string, unknown>;
      release?: { name: string; namespace: string };
      capabilities?: { kubeVersion: string; apiVersions: string[] };
    },
  ): Promise<{ ok: true; yaml: string } | { ok: false; error: string; reason: string }>;
}

export type Rendered = { ok: true; yaml: string; checksum: string } | { ok: false; error: string };

export interface RenderDeps {
  /** Unset when this api has no renderer binary: plain YAML still renders (its layers' patches), charts and overlays do not. */
  engine: Engine | undefined;
  /** The bytes of a source by its digest (the content-addressed store). */
  loadBlob(digest: string): Promise<Buffer | undefined>;
}

/** The renderer a render key names: the engine's version for a chart or an overlay; patching plain YAML is this module's own. */
export const PATCHER_VERSION = 'brokkr-patch/1';
export const rendererVersionOf = (source: RenderInput['source'], engine: Engine | undefined) =>
  source.kind === 'yaml' ? PATCHER_VERSION : (engine?.version ?? 'none');

/** Whether this api can render the source at all (a chart or an overlay needs the engine). */
export const canRender = (source: RenderInput['source'], engine: Engine | undefined) => source.kind === 'yaml' || engine !== undefined;

const checksumOf = (yaml: string) => createHash('sha256').update(yaml).digest('hex');

async function engineOutput(deps: RenderDeps, tenant: string, input: RenderInput): Promise<Rendered> {
  const { source } = input;
  if (source.kind === 'yaml') return { ok: true, yaml: source.yaml, checksum: source.checksum };
  if (!deps.engine) return { ok: false, error: 'this api has no renderer for charts and overlays' };
  const archive = await deps.loadBlob(source.digest);
  if (!archive) return { ok: false, error: `the source ${source.digest} is not in the store` };
  const job =
    source.kind === 'helm'
      ? { kind: source.kind, archive, values: input.values ?? {}, release: source.release, ...(input.capabilities ? { capabilities: input.capabilities } : {}) }
      : { kind: source.kind, archive, path: source.path };
  const result = await deps.engine.render(tenant, job);
  return result.ok ? { ok: true, yaml: result.yaml, checksum: checksumOf(result.yaml) } : { ok: false, error: result.error };
}

/** One input's render: the engine's output (or the object's own YAML) with the layers' patches applied. */
export async function renderInput(deps: RenderDeps, tenant: string, input: RenderInput): Promise<Rendered> {
  const out = await engineOutput(deps, tenant, input);
  if (!out.ok || input.patches.length === 0) return out;
  try {
    const yaml = applyPatches(out.yaml, input.patches);
    return { ok: true, yaml, checksum: checksumOf(yaml) };
  } catch (err) {
    if (err instanceof PatchFailed) return { ok: false, error: err.message };
    throw err;
  }
}

/** Every input rendered once (at most `parallel` at a time; the engine queues fairly between tenants). */
export async function renderAll(deps: RenderDeps, tenant: string, inputs: readonly RenderInput[], parallel = 4): Promise<Map<string, Rendered>> {
  const results = new Map<string, Rendered>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < inputs.length; i = next++) results.set(inputs[i]!.key, await renderInput(deps, tenant, inputs[i]!));
  };
  await Promise.all(Array.from({ length: Math.min(parallel, inputs.length) }, worker));
  return results;
}

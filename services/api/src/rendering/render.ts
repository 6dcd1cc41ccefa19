import { createHash } from 'node:crypto';
import { rendererBusy, rendererUnavailable } from '../errors/catalogue.ts';
import { applyPatches, PatchFailed } from '@brokkr/overrides';
import type { RenderInput, RenderSource } from './plan.ts';

/** One chart or overlay to render: its source by digest (the content-addressed store) and how. */
export interface EngineJob {
  kind: 'helm' | 'kustomize';
  digest: string;
  /** kustomize: the overlay's directory in the archive. */
  path?: string;
  /** Helm: the values after every layer. */
  values?: Record<string, unknown>;
  release?: { name: string; namespace: string };
  capabilities?: { kubeVersion: string; apiVersions: string[] };
}

export type EngineResult = { ok: true; yaml: string } | { ok: false; error: string; reason: string };

/** Helm's and kustomize's own engines, in sandboxed processes, fair between tenants (docs/adr/0043). */
export interface Engine {
  /** The renderer's version, which every render key names; undefined while no renderer is available. */
  version(): Promise<string | undefined>;
  render(tenant: string, job: EngineJob): Promise<EngineResult>;
}

/** An api without a renderer: plain YAML still renders (its layers' patches), charts and overlays are refused (503). */
export const NO_ENGINE: Engine = {
  version: async () => undefined,
  render: async () => ({ ok: false, reason: 'unsupported', error: 'no renderer' }),
};

export type Rendered = { ok: true; yaml: string; checksum: string } | { ok: false; error: string };

/** Where render counts go (the api's metrics). */
export interface RenderCounts {
  rendered(outcome: 'ok' | 'failed', n: number): void;
  reused(n: number): void;
}

export interface RenderDeps {
  engine: Engine;
  counts?: RenderCounts | undefined;
}

/** The renderer a render key names: the engine's version for a chart or an overlay; patching plain YAML is this module's own. */
export const PATCHER_VERSION = 'brokkr-patch/1';

/** The renderer version a source's renders are keyed by; undefined when it needs the engine and there is none. */
export async function rendererVersionOf(source: RenderSource, engine: Engine): Promise<string | undefined> {
  return source.kind === 'yaml' ? PATCHER_VERSION : engine.version();
}

/** The same, or 503 `renderer_unavailable`. */
export async function rendererVersionFor(source: RenderSource, engine: Engine): Promise<string> {
  const version = await rendererVersionOf(source, engine);
  if (!version) throw rendererUnavailable();
  return version;
}

const checksumOf = (yaml: string) => createHash('sha256').update(yaml).digest('hex');

async function engineOutput(deps: RenderDeps, tenant: string, input: RenderInput): Promise<Rendered> {
  const { source } = input;
  if (source.kind === 'yaml') return { ok: true, yaml: source.yaml, checksum: source.checksum };
  const job: EngineJob =
    source.kind === 'helm'
      ? {
          kind: source.kind,
          digest: source.digest,
          values: input.values ?? {},
          release: source.release,
          ...(input.capabilities ? { capabilities: input.capabilities } : {}),
        }
      : { kind: source.kind, digest: source.digest, path: source.path };
  const result = await deps.engine.render(tenant, job);
  // Too many renders waiting: the input may be fine, so this is no refusal of it (503, retry later).
  if (!result.ok && result.reason === 'busy') throw rendererBusy.with(result.error);
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
export async function renderAll(
  deps: RenderDeps,
  tenant: string,
  inputs: readonly RenderInput[],
  parallel = 4,
): Promise<Map<string, Rendered>> {
  const results = new Map<string, Rendered>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < inputs.length; i = next++) results.set(inputs[i]!.key, await renderInput(deps, tenant, inputs[i]!));
  };
  await Promise.all(Array.from({ length: Math.min(parallel, inputs.length) }, worker));
  return results;
}

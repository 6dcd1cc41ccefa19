import { createHash } from 'node:crypto';
import { refersToAgent, resolveAgentReferences, UnresolvedReference, type AgentView } from './agent-vars.ts';
import { capabilitiesOf, type Capabilities } from './capabilities.ts';
import { layersFor, mergeValues, type LayerPatch, type OverrideLayer } from './layers.ts';

/** What a deployment object renders from: a chart or an overlay (pinned by digest), or its own YAML. */
export type RenderSource =
  | { kind: 'helm'; digest: string; values: Record<string, unknown>; release: { name: string; namespace: string } }
  | { kind: 'kustomize'; digest: string; path: string }
  | { kind: 'yaml'; yaml: string; checksum: string };

/** Everything one render depends on; equal inputs give equal output, so its key names the render. */
export interface RenderInput {
  key: string;
  source: RenderSource;
  /** For a chart: the values after every layer, with the agent's references resolved. */
  values?: Record<string, unknown>;
  capabilities?: Capabilities;
  patches: LayerPatch[];
}

export type AgentPlan = { agent: AgentView; layers: string[]; input: RenderInput } | { agent: AgentView; layers: string[]; error: string };

/** JSON with every object's keys sorted: the same value always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function keyOf(rendererVersion: string, input: Omit<RenderInput, 'key'>): string {
  const source = input.source.kind === 'yaml' ? { kind: 'yaml', checksum: input.source.checksum } : input.source;
  const hashed = canonical({ rendererVersion, source, values: input.values, capabilities: input.capabilities, patches: input.patches });
  return createHash('sha256').update(hashed).digest('hex');
}

function inputFor(source: RenderSource, applied: OverrideLayer[], agent: AgentView, rendererVersion: string): RenderInput {
  const patches = resolveAgentReferences(
    applied.flatMap((layer) => layer.patches ?? []),
    agent,
  );
  const input: Omit<RenderInput, 'key'> = { source, patches };
  if (source.kind === 'helm') {
    const merged = applied.reduce((values, layer) => mergeValues(values, layer.layer_values ?? {}), source.values);
    input.values = resolveAgentReferences(merged, agent);
    input.capabilities = capabilitiesOf(agent.facts);
  }
  return { key: keyOf(rendererVersion, input), ...input };
}

/**
 * Each agent's render of the object: the layers that select it applied in priority order, its
 * references resolved, the Capabilities of its cluster for a chart — or why it cannot be rendered
 * for it (a reference it cannot resolve). Agents with equal inputs share a key, and so one render.
 */
export function planRenders(
  source: RenderSource,
  layers: readonly OverrideLayer[],
  agents: readonly AgentView[],
  rendererVersion: string,
): AgentPlan[] {
  return agents.map((agent) => {
    const applied = layersFor(layers, agent);
    const names = applied.map((layer) => layer.name);
    try {
      return { agent, layers: names, input: inputFor(source, applied, agent, rendererVersion) };
    } catch (err) {
      if (err instanceof UnresolvedReference) return { agent, layers: names, error: err.message };
      throw err;
    }
  });
}

/** The distinct inputs of the plans, one per key. */
export function distinctInputs(plans: readonly AgentPlan[]): RenderInput[] {
  const byKey = new Map<string, RenderInput>();
  for (const plan of plans) if ('input' in plan) byKey.set(plan.input.key, plan.input);
  return [...byKey.values()];
}

/** Whether the object itself refers to agents (then its stored YAML cannot stand for every agent). */
export const sourceRefersToAgent = (source: RenderSource) => source.kind === 'helm' && refersToAgent(source.values);

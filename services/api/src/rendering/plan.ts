import { createHash } from 'node:crypto';
import { refersToAgent, resolveAgentReferences, UnresolvedReference, type AgentView } from '@brokkr/overrides';
import { capabilitiesOf, type Capabilities } from '@brokkr/overrides';
import { layersFor, valuesAfter, type LayerPatch, type OverrideLayer } from '@brokkr/overrides';

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

/** The parts of every key of one plan that no agent changes, canonical once (not once per agent). */
interface KeyParts {
  rendererVersion: string;
  source: string;
  /** Each distinct cluster's Capabilities and their canonical text, by the agent's facts_key: a fleet reports a handful. */
  capabilities: Map<string, { capabilities: Capabilities; text: string }>;
}

function keyPartsOf(rendererVersion: string, source: RenderSource): KeyParts {
  const keyed = source.kind === 'yaml' ? { kind: 'yaml', checksum: source.checksum } : source;
  return { rendererVersion: canonical(rendererVersion), source: canonical(keyed), capabilities: new Map() };
}

function capabilitiesFor(parts: KeyParts, agent: AgentView): { capabilities: Capabilities; text: string } {
  const known = agent.facts_key === undefined ? undefined : parts.capabilities.get(agent.facts_key);
  if (known) return known;
  const capabilities = capabilitiesOf(agent.facts);
  const made = { capabilities, text: canonical(capabilities) };
  if (agent.facts_key !== undefined) parts.capabilities.set(agent.facts_key, made);
  return made;
}

/**
 * sha256 of canonical({rendererVersion, source, values, capabilities, patches}), written out in
 * canonical's key order from the parts made once per plan: the same key canonical() of the whole
 * would give (stored renders keep their keys), at a fraction of the cost for 10,000 agents.
 */
function keyOf(parts: KeyParts, input: Omit<RenderInput, 'key'>, capabilitiesText: string | undefined): string {
  const fields: string[] = [];
  if (capabilitiesText !== undefined) fields.push(`"capabilities":${capabilitiesText}`);
  fields.push(`"patches":${canonical(input.patches)}`, `"rendererVersion":${parts.rendererVersion}`, `"source":${parts.source}`);
  if (input.values !== undefined) fields.push(`"values":${canonical(input.values)}`);
  return createHash('sha256')
    .update(`{${fields.join(',')}}`)
    .digest('hex');
}

function inputFor(source: RenderSource, applied: OverrideLayer[], agent: AgentView, parts: KeyParts): RenderInput {
  const patches = resolveAgentReferences(
    applied.flatMap((layer) => layer.patches ?? []),
    agent,
  );
  const input: Omit<RenderInput, 'key'> = { source, patches };
  let capabilitiesText: string | undefined;
  if (source.kind === 'helm') {
    const merged = valuesAfter(
      source.values,
      applied.map((layer) => layer.layer_values),
    );
    input.values = resolveAgentReferences(merged, agent);
    ({ capabilities: input.capabilities, text: capabilitiesText } = capabilitiesFor(parts, agent));
  }
  return { key: keyOf(parts, input, capabilitiesText), ...input };
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
  const parts = keyPartsOf(rendererVersion, source);
  return agents.map((agent) => {
    const applied = layersFor(layers, agent);
    const names = applied.map((layer) => layer.name);
    try {
      return { agent, layers: names, input: inputFor(source, applied, agent, parts) };
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

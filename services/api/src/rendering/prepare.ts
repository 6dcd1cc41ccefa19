import type { Queryable } from '@brokkr/db';
import { storedRenders } from '../domain/stored-renders.ts';
import type { AgentView } from '@brokkr/overrides';
import type { OverrideLayer } from '@brokkr/overrides';
import { distinctInputs, planRenders, type AgentPlan, type RenderSource } from './plan.ts';
import { renderAll, rendererVersionFor, type RenderDeps, type Rendered } from './render.ts';
import { storedRenderKeys, type AgentRender, type NewRender } from './sql/renders.ts';

/** An agent for which the object cannot be rendered, and why. */
export interface RenderFailure {
  agent_id: string;
  agent_name: string;
  reason: string;
}

/** What storing a rendered object needs: every agent's render, the new renders, and what cannot be rendered. */
export interface PreparedRenders {
  /** The renderer the new renders are stored as made by. */
  rendererVersion: string;
  agentRenders: AgentRender[];
  newRenders: NewRender[];
  failures: RenderFailure[];
  /** Each renderable agent's YAML, for the grants check. */
  yamlByAgent: Map<string, string>;
}

export interface PrepareArgs {
  tenant: string;
  source: RenderSource;
  agents: readonly AgentView[];
  layers: readonly OverrideLayer[];
}

/** Renders already stored are read back only for their text (the grants check needs each agent's YAML). */
async function storedYaml(db: Queryable, keys: readonly string[]): Promise<Map<string, Rendered>> {
  const rows = await storedRenders(db, keys);
  return new Map(rows.map((r) => [r.key, { ok: true, yaml: r.yaml_content, checksum: r.yaml_checksum }]));
}

function outcomeOf(plan: AgentPlan, results: Map<string, Rendered>): { render: AgentRender; yaml?: string; failure?: string } {
  const base = { agentId: plan.agent.id, layers: plan.layers };
  if ('error' in plan) return { render: { ...base, key: null, inputKey: null, error: plan.error }, failure: plan.error };
  const inputKey = plan.input.key;
  const result = results.get(inputKey)!;
  if (!result.ok) return { render: { ...base, key: null, inputKey, error: result.error }, failure: result.error };
  return { render: { ...base, key: inputKey, inputKey, error: null }, yaml: result.yaml };
}

function countRenders(deps: RenderDeps, reused: number, fresh: Map<string, Rendered>): void {
  const failed = [...fresh.values()].filter((r) => !r.ok).length;
  deps.counts?.reused(reused);
  deps.counts?.rendered('ok', fresh.size - failed);
  deps.counts?.rendered('failed', failed);
}

/**
 * Every agent's render of an object, each distinct input rendered once and none rendered again
 * that is already stored: what the submit checks (every agent must be renderable) and stores.
 */
export async function prepareRenders(deps: RenderDeps & { db: Queryable }, args: PrepareArgs): Promise<PreparedRenders> {
  const rendererVersion = await rendererVersionFor(args.source, deps.engine);
  const plans = planRenders(args.source, args.layers, args.agents, rendererVersion);
  const inputs = distinctInputs(plans);
  const stored = await storedRenderKeys(
    deps.db,
    inputs.map((i) => i.key),
  );
  const fresh = await renderAll(
    deps,
    args.tenant,
    inputs.filter((i) => !stored.has(i.key)),
  );
  countRenders(deps, stored.size, fresh);
  const results = new Map([...(await storedYaml(deps.db, [...stored])), ...fresh]);
  const prepared: PreparedRenders = { rendererVersion, agentRenders: [], newRenders: [], failures: [], yamlByAgent: new Map() };
  for (const plan of plans) {
    const outcome = outcomeOf(plan, results);
    prepared.agentRenders.push(outcome.render);
    if (outcome.yaml !== undefined) prepared.yamlByAgent.set(plan.agent.id, outcome.yaml);
    if (outcome.failure) prepared.failures.push({ agent_id: plan.agent.id, agent_name: plan.agent.name, reason: outcome.failure });
  }
  for (const [key, result] of fresh) if (result.ok) prepared.newRenders.push({ key, yaml: result.yaml, checksum: result.checksum });
  return prepared;
}

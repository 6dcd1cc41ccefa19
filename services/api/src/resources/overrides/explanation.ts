import type { Explanation } from '@brokkr/contracts';
import { capabilitiesOf } from '@brokkr/overrides';
import { fieldOrigins } from '../../rendering/explain.ts';
import type { AgentView } from '@brokkr/overrides';
import { layersFor, type OverrideLayer } from '@brokkr/overrides';
import { planRenders } from '../../rendering/plan.ts';
import type { RenderingDeps } from '../../rendering/replan.ts';
import { rendererVersionOf } from '../../rendering/render.ts';
import { renderSourceOfStored } from '../../rendering/source-of.ts';
import { stackReachesAgent, storedAgentRender, type StoredAgentRender } from '../../rendering/sql/agent-render.ts';
import { agentViews } from '../../rendering/sql/agents.ts';
import { stackLayers } from '../../rendering/sql/layers.ts';
import { latestRenderableObject, type RenderableObject } from '../../rendering/sql/latest-object.ts';

type Served = Pick<Explanation, 'yaml_content' | 'yaml_checksum' | 'error' | 'rendered_at'>;

/** What the agent is served of the object: its own render (or none), or the object as stored. */
function servedOf(object: RenderableObject, stored: StoredAgentRender | undefined): Served {
  if (!object.per_agent) return { yaml_content: object.yaml_content, yaml_checksum: object.yaml_checksum, error: null, rendered_at: null };
  return {
    yaml_content: stored?.yaml_content ?? null,
    yaml_checksum: stored?.yaml_checksum ?? null,
    error: stored?.error ?? null,
    rendered_at: stored ? stored.rendered_at.toISOString() : null,
  };
}

/** What the agent's render is made from, as the layers and the agent are now. */
async function inputsOf(
  deps: RenderingDeps,
  object: RenderableObject,
  layers: readonly OverrideLayer[],
  agent: AgentView,
): Promise<Explanation['inputs']> {
  const source = renderSourceOfStored(object);
  const [plan] = planRenders(source, layers, [agent], (await rendererVersionOf(source, deps.engine)) ?? 'none');
  return {
    source: object.source,
    values: plan && 'input' in plan ? (plan.input.values ?? null) : null,
    capabilities: source.kind === 'helm' ? capabilitiesOf(agent.facts) : null,
    layers: layersFor(layers, agent).map((l) => ({ name: l.name, priority: l.priority })),
    error: plan && 'error' in plan ? plan.error : null,
  };
}

/** The explanation, or why there is none. */
export async function explainRender(
  deps: RenderingDeps,
  stack: { id: string },
  agentId: string,
): Promise<Explanation | 'no-agent' | 'not-reached' | 'no-object'> {
  const [agent] = await agentViews(deps.db, [agentId]);
  if (!agent) return 'no-agent';
  if (!(await stackReachesAgent(deps.db, stack.id, agent.id))) return 'not-reached';
  const object = await latestRenderableObject(deps.db, stack.id);
  if (!object) return 'no-object';
  const [{ layers }, stored] = await Promise.all([stackLayers(deps.db, stack.id), storedAgentRender(deps.db, agent.id, object.id)]);
  return {
    stack_id: stack.id,
    agent_id: agent.id,
    deployment_object_id: object.id,
    per_agent: object.per_agent,
    ...servedOf(object, stored),
    inputs: await inputsOf(deps, object, layers, agent),
    fields: fieldOrigins(layersFor(layers, agent)),
  };
}

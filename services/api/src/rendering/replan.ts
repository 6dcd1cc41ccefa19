import type { Queryable } from '@brokkr/db';
import { confinedAgentsOfStack } from '../domain/confined-agents.ts';
import type { OverrideLayer } from '@brokkr/overrides';
import { refuseMisplacedRenders } from './placement.ts';
import { prepareRenders, type PreparedRenders } from './prepare.ts';
import { refuseUnrenderable } from './refusals.ts';
import type { RenderDeps } from './render.ts';
import { renderSourceOfStored } from './source-of.ts';
import { stackAgents } from './sql/agents.ts';
import { latestRenderableObject } from './sql/latest-object.ts';

export type RenderingDeps = RenderDeps & { db: Queryable };

/** The stack's newest object (null: none, or a deletion marker) and, when it is rendered per agent, every agent's render of it with the new layers. */
export interface Replan {
  objectId: string | null;
  prepared: PreparedRenders | undefined;
}

/**
 * What a change of the stack's override layers does to its newest object: every agent's render
 * with the proposed layers, refused as a new object would be (422 `render_failed` naming each
 * agent that cannot be rendered for, 422 `grant_refused` when a confined agent would refuse its
 * own render, 503 without a renderer for a chart) so that nothing changes. Nothing is rendered
 * for plain YAML while the stack has no layers.
 */
export async function replanLatest(
  deps: RenderingDeps,
  stack: { id: string; generator_id: string },
  layers: readonly OverrideLayer[],
): Promise<Replan> {
  const latest = await latestRenderableObject(deps.db, stack.id);
  if (!latest || (!latest.per_agent && layers.length === 0)) return { objectId: latest?.id ?? null, prepared: undefined };
  const source = renderSourceOfStored(latest);
  const agents = await stackAgents(deps.db, stack.id);
  const prepared = await prepareRenders(deps, { tenant: stack.generator_id, source, agents, layers });
  refuseUnrenderable(prepared.failures);
  refuseMisplacedRenders(await confinedAgentsOfStack(deps.db, stack.id), prepared);
  return { objectId: latest.id, prepared };
}

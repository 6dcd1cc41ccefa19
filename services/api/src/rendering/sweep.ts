import type { Transact } from '../events/transact.ts';
import type { AgentView } from '@brokkr/overrides';
import type { OverrideLayer } from '@brokkr/overrides';
import { planRenders, type AgentPlan, type RenderSource } from './plan.ts';
import { prepareRenders } from './prepare.ts';
import { rendererVersionOf } from './render.ts';
import type { RenderingDeps } from './replan.ts';
import { renderSourceOfStored } from './source-of.ts';
import { stackAgents, stackAgentsDigest } from './sql/agents.ts';
import type { RenderableObject } from './sql/latest-object.ts';
import { stackLayers } from './sql/layers.ts';
import { upsertAgentRenders, insertRenders } from './sql/renders.ts';
import { agentRendersOf, latestRenderedObjects, layersStillAt, recordRenderFailures, type HeldRender } from './sql/sweep.ts';

export interface SweepDeps extends RenderingDeps {
  transact: Transact;
  /**
   * What this process last swept each object with (renderer version, layers revision, digest of its
   * agents): an object whose inputs are all the same again is not planned again. The periodic sweep
   * of a 10,000-agent stack then reads one row instead of every agent's.
   */
  swept?: Map<string, string>;
}

export interface SweepCount {
  objects: number;
  rendered: number;
  failed: number;
}

/** Whether the agent's row was made from another input than the one it has now (or it has none). */
function stale(plan: AgentPlan, held: HeldRender | undefined): boolean {
  if (!held) return true;
  return 'error' in plan ? held.error !== plan.error || held.inputKey !== null : held.inputKey !== plan.input.key;
}

/**
 * One object: every agent of its stack whose render was made from another input than its own now
 * (it was targeted after the object was stored, or its labels, annotations or cluster changed) is
 * rendered again. A success replaces the agent's render and wakes it; a failure is recorded, keeps
 * what the agent had (an agent targeted later has nothing: it is served nothing of the stack, never
 * a partial apply) and emits `deployment.render_failed`. Written only if the stack's layers did not
 * change meanwhile (their own write re-renders every agent).
 */
async function sweepObject(deps: SweepDeps, object: RenderableObject & { stack_id: string }): Promise<SweepCount> {
  const count = { objects: 1, rendered: 0, failed: 0 };
  const source = renderSourceOfStored(object);
  const version = await rendererVersionOf(source, deps.engine);
  // No renderer now: what agents hold stays; the next sweep tries again.
  if (!version) return count;
  // Both read before the agents: a change made after them is seen by the next sweep.
  const [digest, { revision, layers }] = await Promise.all([
    stackAgentsDigest(deps.db, object.stack_id),
    stackLayers(deps.db, object.stack_id),
  ]);
  const inputs = `${version}\n${revision}\n${digest}`;
  if (deps.swept?.get(object.id) === inputs) return count;
  const [agents, held] = await Promise.all([stackAgents(deps.db, object.stack_id), agentRendersOf(deps.db, object.id)]);
  const plans = planRenders(source, layers, agents, version);
  const due = plans.filter((plan) => stale(plan, held.get(plan.agent.id))).map((plan) => plan.agent);
  const done = due.length === 0 ? count : await renderDue(deps, object, { source, revision, layers, due });
  if (done) deps.swept?.set(object.id, inputs);
  return done ?? count;
}

/** Renders the due agents and stores what came of it; undefined if the layers changed meanwhile. */
async function renderDue(
  deps: SweepDeps,
  object: RenderableObject & { stack_id: string },
  { source, revision, layers, due }: { source: RenderSource; revision: number; layers: OverrideLayer[]; due: AgentView[] },
): Promise<SweepCount | undefined> {
  const prepared = await prepareRenders(deps, { tenant: object.generator_id, source, agents: due, layers });
  const succeeded = prepared.agentRenders.filter((r) => r.key !== null);
  const failed = prepared.agentRenders.filter((r) => r.key === null);
  const stored = await deps.transact(async (tx) => {
    if (!(await layersStillAt(tx.client, object.stack_id, revision))) return false;
    await insertRenders(tx.client, prepared.newRenders, prepared.rendererVersion);
    await upsertAgentRenders(tx.client, object.id, succeeded);
    await recordRenderFailures(tx.client, object.id, failed);
    for (const f of failed) {
      tx.emit('deployment.render_failed', {
        deployment_object_id: object.id,
        stack_id: object.stack_id,
        agent_id: f.agentId,
        reason: f.error,
      });
    }
    tx.notifyAgents(succeeded.map((r) => r.agentId));
    return true;
  });
  return stored ? { objects: 1, rendered: succeeded.length, failed: failed.length } : undefined;
}

/** Every object rendered per agent that is its stack's newest, swept one after the other. */
export async function sweepRenders(deps: SweepDeps): Promise<SweepCount> {
  const total: SweepCount = { objects: 0, rendered: 0, failed: 0 };
  const objects = await latestRenderedObjects(deps.db);
  // Objects no longer their stack's newest are not swept again.
  const current = new Set(objects.map((o) => o.id));
  for (const id of deps.swept?.keys() ?? []) if (!current.has(id)) deps.swept?.delete(id);
  for (const object of objects) {
    const one = await sweepObject(deps, object);
    total.objects += one.objects;
    total.rendered += one.rendered;
    total.failed += one.failed;
  }
  return total;
}

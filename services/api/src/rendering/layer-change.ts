import { stackLayersChanged } from '../errors/catalogue.ts';
import type { Transact, TxScope } from '../events/transact.ts';
import type { OverrideLayer } from '@brokkr/overrides';
import type { Queryable } from '@brokkr/db';
import type { RenderDeps } from './render.ts';
import { replanLatest } from './replan.ts';
import { stackLayers } from './sql/layers.ts';
import { latestObjectId } from './sql/latest-object.ts';
import { storeObjectRenders } from './sql/store-renders.ts';
import { bumpLayersRevision } from './sql/overrides.ts';

const MAX_ATTEMPTS = 3;

export interface LayerChange<T> {
  /** The layers after the change, from the current ones (throws for a change that cannot be made: a name taken, a layer missing). */
  propose(current: readonly OverrideLayer[]): OverrideLayer[];
  /** Writes the change itself, in the transaction that stores its renders. */
  persist(tx: TxScope): Promise<T>;
}

/** What a layer change needs of the api's context (an ApiContext is one). */
export interface LayerChangeDeps {
  rendering: RenderDeps;
  db: { pool: Queryable };
  transact: Transact;
}

/**
 * A change of a stack's override layers, all or nothing: the stack's newest object is rendered for
 * every agent with the proposed layers first (outside any transaction; refused with 422 as a new
 * object would be, so a layer that cannot be rendered for some agent changes nothing), then, in
 * one transaction, the layers' revision is counted on the stack row (which orders the change with
 * every new object: migration 0026), the change is written, the renders replace the agents' ones
 * and the agents are woken. If the layers or the newest object changed meanwhile, it starts over.
 */
export async function changeLayers<T>(
  api: LayerChangeDeps,
  stack: { id: string; generator_id: string },
  change: LayerChange<T>,
): Promise<T> {
  const deps = { ...api.rendering, db: api.db.pool };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { revision, layers } = await stackLayers(deps.db, stack.id);
    const proposed = change.propose(layers);
    const replan = await replanLatest(deps, stack, proposed);
    const done = await api.transact(async (tx) => {
      if (!(await bumpLayersRevision(tx.client, stack.id, revision, proposed.length > 0))) return undefined;
      if ((await latestObjectId(tx.client, stack.id)) !== replan.objectId) return undefined;
      const result = await change.persist(tx);
      if (replan.objectId && replan.prepared) {
        await storeObjectRenders(tx.client, replan.objectId, replan.prepared);
        tx.notifyAgents(replan.prepared.agentRenders.map((r) => r.agentId));
      }
      return { result };
    });
    if (done) return done.result;
  }
  throw stackLayersChanged();
}

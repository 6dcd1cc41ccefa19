import type { Queryable } from '@brokkr/db';
import type { PreparedRenders } from '../prepare.ts';
import { insertRenders, replaceAgentRenders } from './renders.ts';

/**
 * An object's renders become the prepared ones: the new renders stored (once per key), the object
 * marked as rendered per agent (a plain object the stack's first layer now changes; a chart or an
 * overlay is marked already) and each agent's row replaced, agents left out losing theirs.
 */
export async function storeObjectRenders(db: Queryable, objectId: string, prepared: PreparedRenders): Promise<void> {
  await insertRenders(db, prepared.newRenders, prepared.rendererVersion);
  await db.query('INSERT INTO rendered_objects (deployment_object_id) VALUES ($1) ON CONFLICT DO NOTHING', [objectId]);
  await replaceAgentRenders(db, objectId, prepared.agentRenders);
}

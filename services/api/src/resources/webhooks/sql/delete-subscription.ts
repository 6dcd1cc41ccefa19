import type { Queryable } from '@brokkr/db';

/** Hard delete; the deliveries go with it (ON DELETE CASCADE). */
export async function deleteSubscription(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhook_subscriptions WHERE id = $1', [id]);
  return rowCount === 1;
}

import type { OutboxRow } from '@brokkr/contracts';
import type { TaskClient } from './queryable.ts';

export type UnpublishedOutboxRow = Pick<OutboxRow, 'id' | 'subject' | 'payload' | 'headers'>;

/**
 * Reads, changes nothing. No row lock: the api may publish and stamp the same row meanwhile,
 * which is harmless because a second publish carries the same Nats-Msg-Id (deduplicated by the
 * stream) and the stamps (@brokkr/outbox, sql/mark-published.ts) only touch rows still unpublished.
 * Only rows older than `afterSeconds` are taken, so the api's own publish right after its commit
 * normally wins and the relay handles just the leftovers (crash, NATS down).
 */
export async function selectUnpublishedOutbox(db: TaskClient, afterSeconds: number, limit: number): Promise<UnpublishedOutboxRow[]> {
  const { rows } = await db.query<UnpublishedOutboxRow>(
    `SELECT id, subject, payload, headers
       FROM outbox
      WHERE published_at IS NULL
        AND created_at < now() - make_interval(secs => $1)
      ORDER BY created_at, id
      LIMIT $2`,
    [afterSeconds, limit],
  );
  return rows;
}

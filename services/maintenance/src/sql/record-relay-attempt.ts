import type { TaskClient } from './queryable.ts';

/**
 * Stamps the rows JetStream acknowledged as published and counts an attempt on every row the
 * relay tried. `published_at IS NULL` in the WHERE keeps it idempotent and leaves rows the api
 * stamped in the meantime untouched. Row locks last only for this single statement.
 */
export async function recordRelayAttempt(
  db: TaskClient,
  attemptedIds: readonly string[],
  publishedIds: readonly string[],
): Promise<number> {
  if (attemptedIds.length === 0) return 0;
  const result = await db.query(
    `UPDATE outbox
        SET attempts = attempts + 1,
            published_at = CASE WHEN id = ANY($2::uuid[]) THEN now() ELSE NULL END
      WHERE id = ANY($1::uuid[])
        AND published_at IS NULL`,
    [attemptedIds, publishedIds],
  );
  return result.rowCount ?? 0;
}

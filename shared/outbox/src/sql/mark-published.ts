import { prepared, type Queryable } from '@brokkr/db';

// Both stamps touch only rows still unpublished: the api's stamp and maintenance's (relay or a
// task's own publish) may race for a row, and the first one stands.

const markPublishedStatement = prepared(
  'brokkr_outbox_published',
  'UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL',
);

/** The api, after JetStream acknowledged its own publish: not an attempt of the relay's, so `attempts` stays. */
export async function markOutboxPublished(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(markPublishedStatement([ids]));
}

/**
 * Maintenance, after a publish (the relay's, or a task's right after its commit): stamps the rows
 * JetStream acknowledged as published and counts an attempt on every row it tried. Row locks last
 * only for this single statement. Returns how many rows it changed.
 */
export async function recordPublishAttempt(
  db: Queryable,
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

import type pg from 'pg';

export type LockedOutcome<T> = { acquired: false } | { acquired: true; value: T };

/**
 * Runs `fn` on a dedicated pooled connection while it holds a session-level advisory lock, or
 * not at all when another replica holds it (`pg_try_advisory_lock` never waits).
 *
 * Why a session lock rather than `pg_try_advisory_xact_lock` in a transaction: the outbox relay
 * must hold its lock across a NATS publish, and no transaction is ever held open across network
 * I/O (the claiming rule, docs/adr/0004). With a session lock each statement of a task commits on its own
 * (short row locks, nothing to roll back), and one mechanism serves every task.
 *
 * The cost of a session lock is that it outlives a failed unlock, so the connection is destroyed
 * instead of returned to the pool whenever anything goes wrong: Postgres releases a session's
 * advisory locks when the session ends, so a crash, a killed connection or a thrown error can
 * never leave the task locked for other replicas. (It also means the pool must not sit behind a
 * transaction-pooling PgBouncer, which would hand the session to someone else.)
 *
 * Keys come from `hashtextextended(name, 0)`, a stable 64-bit hash of the lock name; the name
 * includes the database schema, because advisory locks are per database, not per schema.
 */
export async function withAdvisoryLock<T>(
  pool: pg.Pool,
  lockName: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<LockedOutcome<T>> {
  const client = await pool.connect();
  let healthy = false;
  try {
    const { rows } = await client.query<{ acquired: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS acquired', [
      lockName,
    ]);
    if (rows[0]?.acquired !== true) {
      healthy = true;
      return { acquired: false };
    }
    const value = await fn(client);
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockName]);
    healthy = true;
    return { acquired: true, value };
  } finally {
    client.release(healthy ? undefined : true);
  }
}

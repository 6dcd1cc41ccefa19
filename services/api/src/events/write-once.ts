import type { Queryable } from '@brokkr/db';
import type { OutboxRow } from '@brokkr/outbox';
import type { NotifyAgents } from '../delivery/send.ts';
import type { OutboxPublisher } from './outbox-publisher.ts';
import { AgentsToWake, type WriteScope } from './transact.ts';

export interface WriteOnceDeps {
  db: { pool: Queryable };
  outbox: OutboxPublisher;
  notifyAgents: NotifyAgents;
}

/**
 * Runs a write that is ONE statement on the pool, without BEGIN/COMMIT: PostgreSQL runs a single
 * statement as its own transaction, so the domain rows and the outbox row its CTE inserts
 * (outboxInsertSql) commit together or not at all, as with transact, for two round trips fewer.
 * After it commits the outbox rows are published and the agents woken, as transact does. A
 * second statement would break that promise, so it is refused (a bug, not a client error).
 */
export async function writeOnce<T>(deps: WriteOnceDeps, fn: (w: WriteScope) => Promise<T>): Promise<T> {
  const rows: OutboxRow[] = [];
  const wake = new AgentsToWake();
  let statements = 0;
  const query: Queryable['query'] = (textOrStatement, values) => {
    if (++statements > 1) throw new Error('writeOnce runs one statement; use transact for more');
    return deps.db.pool.query(textOrStatement, values);
  };
  const db: Queryable = { query };
  const result = await fn({
    db,
    inserted: (row) => rows.push(row),
    notifyAgents(ids, reason) {
      wake.add(ids, reason);
    },
  });
  deps.outbox.publish(rows);
  if (wake.ids.size > 0) await deps.notifyAgents(wake.ids, wake.why);
  return result;
}

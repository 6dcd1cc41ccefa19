import type pg from 'pg';
import { currentTraceparent, type NoticeReason } from '@brokkr/bus';
import type { Db, Queryable } from '@brokkr/db';
import { buildEvent, type DomainEvent, type EventType } from '@brokkr/contracts';
import { insertOutboxRows, outboxRow, type OutboxRow } from '@brokkr/outbox';
import type { NotifyAgents } from './notify.ts';
import type { OutboxPublisher } from './outbox-publisher.ts';

/**
 * What a write needs whether it is one statement (writeOnce) or a transaction (transact): where
 * its statement runs, the events that statement put in the outbox itself, agents to wake.
 */
export interface WriteScope {
  /** Where the write's statements run: the transaction's client, or the pool for writeOnce. */
  db: Queryable;
  /** An outbox row the write's own statement inserted (outboxInsertSql): published after commit. */
  inserted(row: OutboxRow): void;
  /** Agents whose target state this write changes: woken after commit. */
  notifyAgents(agentIds: Iterable<string>): void;
}

/** What a write gets inside its transaction. */
export interface TxScope extends WriteScope {
  /** The transaction's client: every statement of the write goes through it. */
  client: pg.PoolClient;
  /** Records a domain event; it is inserted into the outbox with the write and published after commit. */
  emit(eventType: EventType, data: Record<string, unknown>): DomainEvent;
  /** Runs after a successful commit, before the response (e.g. cache invalidation). Not run on rollback. */
  afterCommit(fn: () => Promise<void> | void): void;
}

/** Runs `fn` in one transaction; events and hooks take effect only if it commits. */
export type Transact = <T>(fn: (tx: TxScope) => Promise<T>) => Promise<T>;

interface Pending {
  /** Emitted events: inserted into the outbox just before COMMIT. */
  rows: OutboxRow[];
  /** Rows the write's statements already inserted. */
  inserted: OutboxRow[];
  agentIds: Set<string>;
  hooks: (() => Promise<void> | void)[];
}

/**
 * Why the write wakes its agents, read from the events it emitted: a created work order, a new
 * deployment object of one stack, or only the agent's own event report (`ack`).
 */
export function noticeReason(rows: readonly OutboxRow[]): NoticeReason | undefined {
  const types = new Set(rows.map((r) => r.event_type));
  const data = (type: string) => rows.find((r) => r.event_type === type)?.payload.data as Record<string, unknown> | undefined;
  const workOrderId = data('workorder.created')?.work_order_id;
  if (typeof workOrderId === 'string') return { work_order_id: workOrderId };
  const created = rows
    .filter((r) => r.event_type === 'deployment.created')
    .map((r) => r.payload.data as { stack_id?: unknown; sequence_id?: unknown });
  const stacks = new Set(created.map((d) => d.stack_id));
  const [stackId] = stacks;
  const sequences = created.map((d) => d.sequence_id).filter((n) => typeof n === 'number');
  if (stacks.size === 1 && typeof stackId === 'string')
    return sequences.length > 0 ? { stack_id: stackId, sequence_id: Math.max(...sequences) } : { stack_id: stackId };
  if (types.size > 0 && [...types].every((t) => t === 'deployment.applied' || t === 'deployment.failed')) return { ack: true };
  return undefined;
}

export function createTransact(deps: { db: Db; outbox: OutboxPublisher; notifyAgents: NotifyAgents }): Transact {
  return async (fn) => {
    const pending: Pending = { rows: [], inserted: [], agentIds: new Set(), hooks: [] };
    const traceparent = currentTraceparent();
    const result = await deps.db.transaction(async (client) => {
      const value = await fn({
        client,
        db: client,
        inserted(row) {
          pending.inserted.push(row);
        },
        emit(eventType, data) {
          const event = buildEvent(eventType, data);
          pending.rows.push(outboxRow(event, traceparent));
          return event;
        },
        notifyAgents(agentIds) {
          for (const id of agentIds) pending.agentIds.add(id);
        },
        afterCommit(hook) {
          pending.hooks.push(hook);
        },
      });
      await insertOutboxRows(client, pending.rows);
      return value;
    });
    deps.outbox.publish([...pending.inserted, ...pending.rows]);
    if (pending.agentIds.size > 0) await deps.notifyAgents(pending.agentIds, noticeReason([...pending.inserted, ...pending.rows]));
    for (const hook of pending.hooks) await hook();
    return result;
  };
}

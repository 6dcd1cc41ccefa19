import type pg from 'pg';
import { currentTraceparent, type NoticeReason } from '@brokkr/bus';
import type { Db, Queryable } from '@brokkr/db';
import { buildEvent, type DomainEvent, type EventType } from '@brokkr/contracts';
import { insertOutboxRows, outboxRow, type OutboxRow } from '@brokkr/outbox';
import type { NotifyAgents } from '../delivery/send.ts';
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
  /**
   * Agents whose target state this write changes: woken after commit. `reason` says why, where the
   * write knows it (a new object of one stack, a new work order, the agent's own report); the
   * delivery and the agent channel use it to do less (delivery/pipeline.ts).
   */
  notifyAgents(agentIds: Iterable<string>, reason?: NoticeReason): void;
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
  wake: AgentsToWake;
  hooks: (() => Promise<void> | void)[];
}

/**
 * The agents a write wakes and why: the reason every call gave (two new objects of one stack: the
 * newer one), else none — a notice without a reason makes every stage start over for the agent.
 */
export class AgentsToWake {
  readonly ids = new Set<string>();
  private calls = 0;
  private reason: NoticeReason | undefined;

  add(agentIds: Iterable<string>, reason: NoticeReason | undefined): void {
    for (const id of agentIds) this.ids.add(id);
    this.reason = this.calls++ === 0 ? reason : sameReason(this.reason, reason);
  }

  get why(): NoticeReason | undefined {
    return this.reason;
  }
}

/** Two reasons as one: the same stack (its newer object), the same work order, two reports; else none. */
function sameReason(a: NoticeReason | undefined, b: NoticeReason | undefined): NoticeReason | undefined {
  if (!a || !b) return undefined;
  if (a.stack_id && a.stack_id === b.stack_id)
    return { stack_id: a.stack_id, sequence_id: Math.max(a.sequence_id ?? 0, b.sequence_id ?? 0) };
  if (a.work_order_id && a.work_order_id === b.work_order_id) return a;
  return a.ack && b.ack ? a : undefined;
}

export function createTransact(deps: { db: Db; outbox: OutboxPublisher; notifyAgents: NotifyAgents }): Transact {
  return async (fn) => {
    const pending: Pending = { rows: [], inserted: [], wake: new AgentsToWake(), hooks: [] };
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
        notifyAgents(agentIds, reason) {
          pending.wake.add(agentIds, reason);
        },
        afterCommit(hook) {
          pending.hooks.push(hook);
        },
      });
      await insertOutboxRows(client, pending.rows);
      return value;
    });
    deps.outbox.publish([...pending.inserted, ...pending.rows]);
    if (pending.wake.ids.size > 0) await deps.notifyAgents(pending.wake.ids, pending.wake.why);
    for (const hook of pending.hooks) await hook();
    return result;
  };
}

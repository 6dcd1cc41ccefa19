import { sendAgentNotices, type NatsConnection, type NoticeReason } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
import type { PublishWindow } from './publish-window.ts';
import type { AgentWakeups } from './wakeups.ts';

/**
 * Wakes long-polls waiting for these agents' target state, on every api replica. Resolves once
 * nats-server has the wake-ups (or after a bounded wait): a write awaits it before it is
 * acknowledged.
 */
export type NotifyAgents = (agentIds: Iterable<string>, reason?: NoticeReason) => Promise<void>;

const FLUSH_TIMEOUT_MS = 1000;

/**
 * The wake-ups also keep every replica's cached target states current (answer-cache.ts), so a
 * write is acknowledged only when no replica can still answer from before it (ADR 0038):
 *
 *   - this replica's cache hears its own wake-ups at once, in the write (`deliverLocally`), and
 *     its subscription skips the copies NATS brings back (they carry its origin);
 *   - the others' copies are routed by nats-server once it answered a flush sent after them, as the
 *     PAK cache's invalidation does (auth/authenticator.ts).
 *
 * `nc` is a connection of its own: on the process's main connection the flush's answer queued
 * behind every message the process receives — after a change to a stack 10,000 agents hold, its own
 * 10,000 wake-ups — and a write waited for all of them to be handled. The wake-ups of the writes
 * of one publish window (ADR 0028) share one socket write and one flush: flushing per event-loop
 * turn instead answered writes in 0.8 ms instead of 3.5 ms at 500/s, for 0.07–0.18 ms more CPU
 * per write (bench:api, docs/perf/2026-11-27-fleet-holds-2.md).
 */
export function createNotifyAgents(nc: NatsConnection, wakeups: AgentWakeups, logger: Logger, window: PublishWindow): NotifyAgents {
  let batchFlushed: Promise<void> | undefined;
  // The window runs its sends in one synchronous run: a flush queued behind them covers them all.
  const flushAfterBatch = () =>
    (batchFlushed ??= Promise.resolve().then(() => {
      batchFlushed = undefined;
      return flushed(nc, logger);
    }));
  return (agentIds, reason) => {
    const ids = [...new Set(agentIds)];
    wakeups.deliverLocally(ids, reason);
    return new Promise<void>((resolve) => {
      window.defer(() => {
        sendAgentNotices(nc, ids, logger, { reason, origin: wakeups.origin });
        void flushAfterBatch().then(resolve);
      });
    });
  };
}

async function flushed(nc: NatsConnection, logger: Logger): Promise<void> {
  if (nc.isClosed()) return;
  await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
    logger.warn({ err }, 'agent wake-up flush failed'),
  );
}

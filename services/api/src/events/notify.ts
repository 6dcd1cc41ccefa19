import { sendAgentNotices, type NatsConnection, type NoticeReason } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
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
 * 10,000 wake-ups — and a write waited for all of them to be handled. The writes of one event-loop
 * turn share one socket write and one flush.
 */
export function createNotifyAgents(nc: NatsConnection, wakeups: AgentWakeups, logger: Logger): NotifyAgents {
  let sends: (() => void)[] = [];
  let turn: Promise<void> | undefined;
  const sendTurn = (): Promise<void> => {
    const batch = sends;
    sends = [];
    turn = undefined;
    for (const send of batch) send();
    return flushed(nc, logger);
  };
  return (agentIds, reason) => {
    const ids = [...new Set(agentIds)];
    wakeups.deliverLocally(ids, reason);
    sends.push(() => sendAgentNotices(nc, ids, logger, { reason, origin: wakeups.origin }));
    turn ??= new Promise<void>((resolve) => setImmediate(resolve)).then(sendTurn);
    return turn;
  };
}

async function flushed(nc: NatsConnection, logger: Logger): Promise<void> {
  if (nc.isClosed()) return;
  await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
    logger.warn({ err }, 'agent wake-up flush failed'),
  );
}

import { sendAgentNotices, type NatsConnection, type NoticeReason } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
import type { Delivery } from './pipeline.ts';
import type { PublishWindow } from './publish-window.ts';
import type { Replicas } from './replicas.ts';

/**
 * Wakes these agents' long-polls and sockets on every api replica, saying why when the write knows
 * (a new object of one stack, a new work order, the agent's own report). Resolves when the write
 * may be answered: at once when no other replica could answer from before it, else once
 * nats-server has the notices (or after a bounded wait).
 */
export type NotifyAgents = (agentIds: Iterable<string>, reason?: NoticeReason) => Promise<void>;

const FLUSH_TIMEOUT_MS = 1000;

/**
 * This replica's stages hear the notices in the write (Delivery.local). For the other replicas'
 * answers the write waits until nats-server answered a flush sent after the notices, as the PAK
 * cache's invalidation does (auth/authenticator.ts) — but only while there are other replicas
 * (replicas.ts): alone, the write is answered once it committed and this replica heard it.
 *
 * `nc` is a connection of its own: on the process's main connection the flush's answer queued
 * behind every message the process receives — after a change to a stack 10,000 agents hold, its own
 * 10,000 notices — and a write waited for all of them to be handled. The notices of the writes of
 * one publish window (ADR 0028) share one socket write and one flush.
 */
export function createNotifyAgents(deps: {
  nc: NatsConnection;
  delivery: Delivery;
  replicas: Replicas;
  logger: Logger;
  window: PublishWindow;
}): NotifyAgents {
  const { nc, delivery, replicas, logger, window } = deps;
  let batchFlushed: Promise<void> | undefined;
  // The window runs its sends in one synchronous run: a flush queued behind them covers them all.
  const flushAfterBatch = () =>
    (batchFlushed ??= Promise.resolve().then(() => {
      batchFlushed = undefined;
      return flushed(nc, logger);
    }));
  return (agentIds, reason) => {
    const ids = [...new Set([...agentIds].map((id) => id.toLowerCase()))];
    delivery.local(ids, reason);
    const publish = () => sendAgentNotices(nc, ids, logger, { reason, origin: delivery.origin });
    if (!replicas.othersMayAnswer()) {
      window.defer(publish);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      window.defer(() => {
        publish();
        void flushAfterBatch().then(resolve);
      });
    });
  };
}

async function flushed(nc: NatsConnection, logger: Logger): Promise<void> {
  if (nc.isClosed()) return;
  await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
    logger.warn({ err }, 'agent notice flush failed'),
  );
}

import { sendAgentNotices, type NatsConnection, type NoticeReason } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
import type { PublishWindow } from './publish-window.ts';

/**
 * Wakes long-polls waiting for these agents' target state, on every api replica. Resolves once
 * nats-server has the wake-ups (or after a bounded wait): a write awaits it before it is
 * acknowledged.
 */
export type NotifyAgents = (agentIds: Iterable<string>, reason?: NoticeReason) => Promise<void>;

const FLUSH_TIMEOUT_MS = 1000;

/** Wake-ups go out when the publish window closes, with the events of the same writes. */
export function createNotifyAgents(nc: NatsConnection, logger: Logger, window: PublishWindow): NotifyAgents {
  return (agentIds, reason) => {
    const ids = [...new Set(agentIds)];
    return new Promise<void>((resolve) => {
      window.defer(() => {
        sendAgentNotices(nc, ids, logger, reason);
        void flushed(nc, logger).then(resolve);
      });
    });
  };
}

/**
 * The wake-ups also keep every replica's cached target states current (answer-cache.ts). Once the
 * server answered a flush it has routed the wake-ups to every replica's subscription (ours first:
 * it gets them before the flush's answer), so a client told that its write succeeded finds no
 * replica still answering from before it, as the PAK cache's invalidation does (auth/authenticator.ts).
 */
async function flushed(nc: NatsConnection, logger: Logger): Promise<void> {
  if (nc.isClosed()) return;
  await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
    logger.warn({ err }, 'agent wake-up flush failed'),
  );
}

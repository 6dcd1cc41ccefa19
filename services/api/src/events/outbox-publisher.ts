import { publishOutboxRows, type JetStreamClient } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { markOutboxPublished, type OutboxRow } from './sql/outbox.ts';

export interface OutboxPublisher {
  /** Publishes committed rows in the background; failures stay in the outbox for the relay. */
  publish(rows: readonly OutboxRow[]): void;
  /** Waits for publishes in flight (shutdown). */
  drain(): Promise<void>;
}

export function createOutboxPublisher(deps: { js: JetStreamClient; db: Queryable; logger: Logger }): OutboxPublisher {
  const logger = deps.logger.child({ component: 'outbox' });
  const inFlight = new Set<Promise<void>>();

  async function publishNow(rows: readonly OutboxRow[]): Promise<void> {
    const { published, firstError } = await publishOutboxRows(deps.js, rows);
    if (firstError !== undefined)
      logger.warn({ err: firstError, unpublished: rows.length - published.length }, 'event publish failed; left for the relay');
    await markOutboxPublished(deps.db, published);
  }

  return {
    publish(rows) {
      if (rows.length === 0) return;
      // The HTTP response does not wait: the event is already safe in the outbox.
      const task = publishNow(rows)
        .catch((err: unknown) => logger.warn({ err }, 'marking outbox rows published failed; the relay will republish them'))
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    },
    async drain() {
      await Promise.allSettled([...inFlight]);
    },
  };
}

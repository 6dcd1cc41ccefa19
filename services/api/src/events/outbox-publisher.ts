import { publishOutboxRows, type JetStreamClient } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { markOutboxPublished, type OutboxRow } from '@brokkr/outbox';
import type { PublishWindow } from '../delivery/publish-window.ts';

export interface OutboxPublisher {
  /** Publishes committed rows in the background; failures stay in the outbox for the relay. */
  publish(rows: readonly OutboxRow[]): void;
  /** Waits for publishes in flight (shutdown). */
  drain(): Promise<void>;
}

/**
 * How long published ids gather before one UPDATE stamps them all. Far below the relay's age
 * threshold (it only takes rows seconds old), so the relay still leaves them alone.
 */
const MARK_BATCH_MS = 50;

export function createOutboxPublisher(deps: {
  js: JetStreamClient;
  db: Queryable;
  logger: Logger;
  window: PublishWindow;
}): OutboxPublisher {
  const logger = deps.logger.child({ component: 'outbox' });
  const inFlight = new Set<Promise<void>>();
  // Published ids waiting to be stamped: one UPDATE for every publish that completed meanwhile
  // instead of one per write. Losing a stamp (crash) only means the relay publishes the row
  // again, which JetStream drops as a duplicate (Nats-Msg-Id = event id).
  let unmarked: string[] = [];
  let marking: Promise<void> | undefined;

  async function markLoop(): Promise<void> {
    while (unmarked.length > 0) {
      const ids = unmarked;
      unmarked = [];
      await markOutboxPublished(deps.db, ids).catch((err: unknown) =>
        logger.warn({ err, rows: ids.length }, 'marking outbox rows published failed; the relay will republish them'),
      );
    }
  }

  // Ids that arrive after markLoop's last check but before its promise settles start the next round.
  function scheduleMark(): void {
    if (marking || unmarked.length === 0) return;
    marking = new Promise<void>((resolve) => setTimeout(resolve, MARK_BATCH_MS)).then(markLoop).finally(() => {
      marking = undefined;
      scheduleMark();
    });
  }

  function mark(ids: readonly string[]): void {
    unmarked.push(...ids);
    scheduleMark();
  }

  async function publishNow(rows: readonly OutboxRow[]): Promise<void> {
    const { published, firstError } = await publishOutboxRows(deps.js, rows);
    if (firstError !== undefined)
      logger.warn({ err: firstError, unpublished: rows.length - published.length }, 'event publish failed; left for the relay');
    mark(published);
  }

  // Rows committed during the current publish window: published together when it closes.
  let waiting: OutboxRow[] = [];
  function publishWaiting(): void {
    const rows = waiting;
    waiting = [];
    const task = publishNow(rows)
      .catch((err: unknown) => logger.warn({ err }, 'publishing outbox rows failed; the relay will republish them'))
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  }

  return {
    publish(rows) {
      if (rows.length === 0) return;
      // The HTTP response does not wait: the event is already safe in the outbox.
      if (waiting.length === 0) deps.window.defer(publishWaiting);
      waiting.push(...rows);
    },
    async drain() {
      deps.window.flush();
      await Promise.allSettled([...inFlight]);
      while (marking) await marking;
    },
  };
}

import type { JetStreamClient } from '@nats-io/jetstream';
import { orderedEnvelope, type OutboxRow } from '@brokkr/contracts';
import { publishJson } from './publish.ts';

const PUBLISH_TIMEOUT_MS = 5000;

export interface OutboxPublishResult {
  /** Ids of the rows the stream acknowledged (a duplicate acknowledgement counts: it is stored). */
  published: string[];
  /** The first failure, when some rows were not acknowledged; those stay for the next attempt. */
  firstError?: unknown;
}

/** The part of an outbox row that publishing needs (the relay reads no more than this). */
export type PublishableOutboxRow = Pick<OutboxRow, 'id' | 'subject' | 'headers'> & { payload: OutboxRow['payload'] };

/**
 * Publishes outbox rows to JetStream, all at once (pipelined in order on the connection's AckPublisher), each with
 * `Nats-Msg-Id` = the row id so a repeat within the duplicate window is dropped by the stream, and
 * the row's own trace parent. The one publisher of outbox rows: the api right after its commit and
 * maintenance's relay for leftovers both use it. The envelope goes out in Brokkr's key order even
 * when it was read back from jsonb, which does not keep order.
 */
export async function publishOutboxRows(js: JetStreamClient, rows: readonly PublishableOutboxRow[]): Promise<OutboxPublishResult> {
  const results = await Promise.allSettled(
    rows.map((row) =>
      publishJson(js, row.subject, orderedEnvelope(row.payload), {
        msgID: row.id,
        timeoutMs: PUBLISH_TIMEOUT_MS,
        ...(row.headers?.traceparent ? { traceparent: row.headers.traceparent } : {}),
      }),
    ),
  );
  const published = rows.filter((_, i) => results[i]?.status === 'fulfilled').map((row) => row.id);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  return failure ? { published, firstError: failure.reason } : { published };
}

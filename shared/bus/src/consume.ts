import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '@brokkr/logger';
import { ensureDurable } from './consumer-config.ts';

/**
 * Handles one message and settles it: `m.ack()` when done (or `await m.ackAck()` when the ack
 * must be confirmed), `m.nak(delayMs)` to retry later, `m.term()` to give up on it. A message left
 * unsettled is redelivered after `ackWaitMs`; call `m.working()` to extend that during long work.
 * If the handler throws, the message is nak'ed (redelivered at once, up to `maxDeliver` times).
 */
export type MessageHandler = (msg: JsMsg) => Promise<void>;

export interface ConsumeDurableOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  /** Shared by every replica of a service: the server hands each message to one of them. */
  durable: string;
  filterSubject: string;
  handler: MessageHandler;
  logger: Logger;
  /** How many messages one pull asks for (kept small so idle replicas are not starved). Default 16. */
  maxMessages?: number;
  /** Default 30 s. */
  ackWaitMs?: number;
  /** Deliveries before the server stops redelivering a message. Default 10. */
  maxDeliver?: number;
  /** Unacknowledged messages allowed across all replicas. Default 1000. */
  maxAckPending?: number;
}

export interface DurableConsumerHandle {
  /** Stops pulling, returns messages not yet handled (nak) and waits for the in-flight handler. */
  stop(): Promise<void>;
  /** Settles when the loop ends, through stop() or because the connection closed. */
  readonly done: Promise<void>;
}

const NOTABLE_STATUS = new Set(['heartbeats_missed', 'consumer_not_found', 'stream_not_found', 'consumer_deleted', 'exceeded_limits', 'no_responders']);

async function logConsumerStatus(messages: ConsumerMessages, logger: Logger): Promise<void> {
  for await (const status of messages.status()) {
    if (NOTABLE_STATUS.has(status.type)) logger.warn({ status }, `consumer ${status.type}`);
  }
}

async function runLoop(messages: ConsumerMessages, options: ConsumeDurableOptions, isStopping: () => boolean): Promise<void> {
  const { handler, logger } = options;
  for await (const m of messages) {
    if (isStopping()) {
      // Already pulled but not started: hand it straight back so another replica takes it now
      // rather than after ack_wait.
      m.nak();
      continue;
    }
    try {
      await handler(m);
    } catch (err) {
      logger.error({ err, subject: m.subject, seq: m.seq, deliveries: m.info.deliveryCount }, 'message handler failed');
      m.nak();
    }
  }
}

/**
 * Ensures the durable pull consumer and processes its messages one at a time, in order of
 * arrival, until stop(). For batching, use `js.consumers.get(...).consume()` directly.
 */
export async function consumeDurable(options: ConsumeDurableOptions): Promise<DurableConsumerHandle> {
  const logger = options.logger.child({ stream: options.stream, durable: options.durable });
  await ensureDurable(options.jsm, {
    stream: options.stream,
    durable: options.durable,
    filterSubject: options.filterSubject,
    ackWaitMs: options.ackWaitMs ?? 30_000,
    maxDeliver: options.maxDeliver ?? 10,
    maxAckPending: options.maxAckPending ?? 1000,
  });
  const consumer = await options.js.consumers.get(options.stream, options.durable);
  const messages = await consumer.consume({ max_messages: options.maxMessages ?? 16 });
  logConsumerStatus(messages, logger).catch((err: unknown) => logger.debug({ err }, 'consumer status watcher ended'));

  let stopping = false;
  const done = runLoop(messages, { ...options, logger }, () => stopping).catch((err: unknown) => {
    logger.error({ err }, 'consumer loop failed');
  });
  return {
    done,
    async stop() {
      stopping = true;
      messages.stop();
      await done;
    },
  };
}

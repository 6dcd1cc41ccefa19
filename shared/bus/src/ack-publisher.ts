import {
  createInbox,
  headers as natsHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Payload,
  type Subscription,
} from '@nats-io/transport-node';
import type { PubAck } from '@nats-io/jetstream';
import { PublishAckError } from './publish-error.ts';

export interface AckPublishOptions {
  /** Becomes `Nats-Msg-Id`: the stream drops a repeat within its duplicate window. */
  msgID?: string;
  /** Headers to send (the publisher adds `Nats-Msg-Id` to them). */
  headers?: MsgHdrs;
  /** Milliseconds to wait for the stream's acknowledgement. */
  timeoutMs?: number;
}

export interface AckPublisherOptions {
  /** Timeout of a publish that names none. */
  defaultTimeoutMs?: number;
  /** How often one timer looks for publishes whose ack is overdue (a timeout fires up to this much late). */
  sweepIntervalMs?: number;
}

interface Pending {
  subject: string;
  deadline: number;
  resolve: (ack: PubAck) => void;
  reject: (err: PublishAckError) => void;
}

interface AckBody {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  domain?: string;
  error?: { code?: number; err_code?: number; description?: string };
}

const DEFAULT_TIMEOUT_MS = 5000;
const SWEEP_INTERVAL_MS = 100;

/**
 * Publishes to JetStream and resolves each publish when the stream's acknowledgement arrives,
 * with many publishes in flight on one connection.
 *
 * `js.publish()` sends every message as a separate request: a timer, an entry in the request mux,
 * the client's retry loop, and an Error with a stack trace built on every *successful* ack (nats.js
 * rejects the settled request's promise with `new RequestError("cancelled")`). That was ~8-10% of
 * the api's CPU under write load. Here every publish is a plain `nc.publish` with its own reply
 * subject under one wildcard subscription; a map finds the waiting caller by the reply token, and
 * one interval timer, running only while acks are awaited, times out the overdue ones.
 *
 * Acks come back in publish order because the server stores in arrival order, so nothing here
 * reorders. nats.js re-subscribes after a reconnect; a publish whose ack was lost in the outage
 * times out, and a retry with the same msgID is absorbed by the stream's duplicate window.
 */
export class AckPublisher {
  private readonly prefix: string;
  private readonly pendingAcks = new Map<string, Pending>();
  private readonly sub: Subscription | undefined;
  private readonly defaultTimeoutMs: number;
  private readonly sweepIntervalMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private nextToken = 0;
  /** Why this publisher can no longer receive acks, once it cannot. */
  private closed: { message: string; cause?: unknown } | undefined;

  constructor(
    private readonly nc: NatsConnection,
    options: AckPublisherOptions = {},
  ) {
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.sweepIntervalMs = options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
    // The connection's own inbox prefix: a hub service's user may subscribe to nothing else.
    this.prefix = `${createInbox(inboxPrefixOf(nc))}.`;
    try {
      this.sub = nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => this.onReply(err, msg) });
    } catch (err) {
      // The connection is closed or draining: every publish fails the same way.
      this.closed = { message: 'the NATS connection is closed', cause: err };
      return;
    }
    // Closes with the connection (close or drain) or on a permission error: nothing more can arrive.
    this.sub.closed.then(
      () => this.close(),
      () => this.close(),
    );
  }

  /** Publishes awaiting their ack. */
  get pending(): number {
    return this.pendingAcks.size;
  }

  /** False once the connection or the reply subscription is gone; a new publisher is needed then. */
  get isOpen(): boolean {
    return this.closed === undefined;
  }

  /** Never throws: every failure, even an immediate one, is a rejected promise of a PublishAckError. */
  publish(subject: string, data: Payload, options: AckPublishOptions = {}): Promise<PubAck> {
    if (this.closed) return Promise.reject(this.closedError(subject));
    const token = (this.nextToken++).toString(36);
    let hdrs = options.headers;
    if (options.msgID !== undefined) {
      hdrs ??= natsHeaders();
      hdrs.set('Nats-Msg-Id', options.msgID);
    }
    try {
      this.nc.publish(subject, data, hdrs ? { reply: this.prefix + token, headers: hdrs } : { reply: this.prefix + token });
    } catch (err) {
      // Closed, draining, or a payload over the server's limit.
      const reason = this.nc.isClosed() || this.nc.isDraining() ? 'closed' : 'rejected';
      return Promise.reject(
        new PublishAckError(reason, subject, `cannot publish to ${subject}: ${(err as Error).message}`, { cause: err }),
      );
    }
    const deadline = Date.now() + (options.timeoutMs ?? this.defaultTimeoutMs);
    const promise = new Promise<PubAck>((resolve, reject) => {
      this.pendingAcks.set(token, { subject, deadline, resolve, reject });
    });
    this.sweeper ??= setInterval(() => this.sweep(), this.sweepIntervalMs).unref();
    return promise;
  }

  /** Rejects every publish still waiting and stops listening. Idempotent. */
  close(): void {
    this.closed ??= { message: 'the NATS connection closed before the ack arrived' };
    this.stopSweeper();
    for (const [token, p] of this.pendingAcks) {
      this.pendingAcks.delete(token);
      p.reject(this.closedError(p.subject));
    }
    if (this.sub && !this.sub.isClosed()) this.sub.unsubscribe();
  }

  private onReply(err: Error | null, msg: Msg): void {
    if (err) {
      // A permission error on the reply subject: no ack will ever arrive here.
      this.closed = { message: `cannot receive acks: ${err.message}`, cause: err };
      this.close();
      return;
    }
    const token = msg.subject.slice(this.prefix.length);
    const p = this.pendingAcks.get(token);
    if (!p) return; // timed out already
    this.pendingAcks.delete(token);
    const outcome = parseAck(p.subject, msg);
    if (outcome instanceof PublishAckError) p.reject(outcome);
    else p.resolve(outcome);
  }

  private closedError(subject: string): PublishAckError {
    const { message, cause } = this.closed ?? { message: 'closed' };
    return new PublishAckError('closed', subject, `no ack for ${subject}: ${message}`, cause === undefined ? {} : { cause });
  }

  private sweep(): void {
    if (this.pendingAcks.size === 0) {
      this.stopSweeper();
      return;
    }
    const now = Date.now();
    for (const [token, p] of this.pendingAcks) {
      if (p.deadline > now) continue;
      this.pendingAcks.delete(token);
      p.reject(new PublishAckError('timeout', p.subject, `no ack from JetStream for ${p.subject} in time`));
    }
  }

  private stopSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

/** The stream's answer: a PubAck, or why the message was not stored. */
function parseAck(subject: string, msg: Msg): PubAck | PublishAckError {
  // The server answers a request nobody subscribes to with an empty 503: no stream takes the subject.
  if (msg.data.length === 0 && msg.headers?.code === 503) {
    return new PublishAckError('no-stream', subject, `no JetStream stream takes subject ${subject} (no responders)`, { code: 503 });
  }
  let body: AckBody;
  try {
    body = msg.json<AckBody>();
  } catch (err) {
    return new PublishAckError('invalid-ack', subject, `unreadable ack for ${subject}`, { cause: err });
  }
  if (body.error) {
    const { code, err_code: errCode, description = 'no description' } = body.error;
    return new PublishAckError('rejected', subject, `JetStream refused the publish to ${subject}: ${description}`, { code, errCode });
  }
  return toPubAck(subject, body);
}

function toPubAck(subject: string, body: AckBody): PubAck | PublishAckError {
  if (typeof body.stream !== 'string' || body.stream === '' || typeof body.seq !== 'number') {
    return new PublishAckError('invalid-ack', subject, `unexpected ack for ${subject}: not a PubAck`);
  }
  const ack: PubAck = { stream: body.stream, seq: body.seq, duplicate: body.duplicate === true };
  if (body.domain) ack.domain = body.domain;
  return ack;
}

/** The `inboxPrefix` the connection was made with (nats.js keeps its options on the connection). */
function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return (nc as NatsConnection & { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
}

const publishers = new WeakMap<NatsConnection, AckPublisher>();

/**
 * The connection's publisher, created on first use and kept as long as the connection. After the
 * connection closed it returns one that rejects every publish.
 */
export function ackPublisherFor(nc: NatsConnection): AckPublisher {
  let publisher = publishers.get(nc);
  if (publisher === undefined || (!publisher.isOpen && !nc.isClosed() && !nc.isDraining())) {
    publisher = new AckPublisher(nc);
    publishers.set(nc, publisher);
  }
  return publisher;
}

import type { Request, Response } from 'express';
import { SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { hashPresentedPak, pakFromAuthorization } from '@brokkr/pak';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Identity } from '../auth/identity.ts';
import type { StreamQuota } from '../limits/stream-quota.ts';
import { onStackInvalidation } from '../events/stack-invalidation.ts';
import { StackOwners } from './stack-owners.ts';

/**
 * Server-sent events for the console, fed by the NATS traffic the hub already produces: every
 * committed domain event (`brokkr.events.>`, published by whichever replica or the outbox relay)
 * and every audit entry (`brokkr.audit.>`). Each api replica with a browser connected holds one
 * plain subscription to both, so a browser connected to any replica sees changes made through any
 * other. These are hints for the page to re-read the API (at most once, like the core subjects):
 * the REST API stays the truth.
 *
 * Who sees what: admins everything; a generator the events about its own stacks; an agent the
 * events naming it; audit entries only admins. The PAK is re-checked before every message and on
 * every keep-alive, so a rotated or deleted PAK sees nothing more and loses its stream.
 */

const KEEPALIVE_MS = 20_000;

interface Client {
  identity: Identity;
  pakHash: string;
  res: Response;
}

interface Envelope {
  id?: string;
  event_type?: string;
  action?: string;
  data?: { stack_id?: string | null; agent_id?: string | null };
}

export interface LiveEvents {
  /** Answers with an event stream until the client leaves or the process stops; throws 429 when its PAK holds too many. */
  stream(req: Request, res: Response, identity: Identity): void;
  close(): void;
}

export interface LiveEventsOptions {
  nc: NatsConnection;
  db: Queryable;
  auth: Authenticator;
  logger: Logger;
  shutdownSignal: AbortSignal;
  /** Set to the number of open streams (brokkr_console_streams). */
  openStreams: { set(value: number): void };
  /** Streams per PAK: one over the limit is answered 429 `too_many_streams`. */
  streams: StreamQuota;
}

function send(res: Response, kind: string, payload: unknown): void {
  res.write(`event: ${kind}\ndata: ${JSON.stringify(payload)}\n\n`);
}

/** The headers of an event stream; the status and headers go out at once, before the first event. */
function openEventStream(res: Response): void {
  res.status(200).set({
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    // Tells nginx-style proxies not to buffer the stream.
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
}

/** This process's console streams: the open ones, and the NATS subscriptions and caches they share. */
class ConsoleStreams implements LiveEvents {
  private readonly clients = new Set<Client>();
  private readonly owners: StackOwners;
  private readonly stopForgetting: () => void;
  private readonly keepalive: NodeJS.Timeout;
  // Subscribed only while a browser is connected: a plain subscription to `brokkr.events.>` makes
  // nats-server send this process a copy of every event it publishes (and every other replica's),
  // which without a console client is parsed only to be dropped (bench:api: a third of the NATS
  // traffic of an agent event report).
  private subscriptions: { unsubscribe(): void }[] = [];

  constructor(private readonly options: LiveEventsOptions) {
    this.owners = new StackOwners(options.db);
    this.stopForgetting = onStackInvalidation(options.nc, options.logger, (stackId) => this.owners.forget(stackId));
    // A rotated or deleted PAK must not keep watching: it is re-resolved (from the cache, which
    // rotation invalidates on every replica) before each message and on every keep-alive.
    this.keepalive = setInterval(() => this.keepAlive(), KEEPALIVE_MS);
    this.keepalive.unref();
    options.shutdownSignal.addEventListener('abort', () => this.closeAll(), { once: true });
  }

  stream(req: Request, res: Response, identity: Identity): void {
    const { options, clients } = this;
    const release = options.streams.require('event_stream', identity);
    res.once('close', release);
    // The authentication middleware already resolved this header, so it hashes.
    const pakHash = hashPresentedPak(pakFromAuthorization(req.headers.authorization ?? '')) ?? '';
    openEventStream(res);
    const client: Client = { identity, pakHash, res };
    if (this.subscriptions.length === 0) this.subscribe();
    clients.add(client);
    options.openStreams.set(clients.size);
    res.on('close', () => {
      clients.delete(client);
      options.openStreams.set(clients.size);
      if (clients.size === 0) this.unsubscribe();
    });
    // `ready` promises that changes made from now on reach this stream, whichever replica makes
    // them: the flush is a round trip to nats-server, so the subscription is in place by then.
    const ready = () => {
      if (clients.has(client)) send(res, 'ready', { admin: identity.admin, generator: identity.generator, agent: identity.agent });
    };
    options.nc.flush().then(ready, ready);
  }

  close(): void {
    clearInterval(this.keepalive);
    this.stopForgetting();
    this.unsubscribe();
    this.closeAll();
  }

  private closeAll(): void {
    for (const client of this.clients) client.res.end();
    this.clients.clear();
  }

  private keepAlive(): void {
    for (const client of this.clients) {
      void this.stillValid(client).then(
        (valid) => valid && client.res.write(': keep-alive\n\n'),
        () => client.res.write(': keep-alive\n\n'),
      );
    }
  }

  private async visible(client: Client, kind: 'event' | 'audit', envelope: Envelope): Promise<boolean> {
    const { identity } = client;
    if (identity.admin) return true;
    if (kind === 'audit') return false;
    const data = envelope.data ?? {};
    if (identity.agent) return data.agent_id === identity.agent;
    if (identity.generator && data.stack_id) return (await this.owners.ownerOf(data.stack_id)) === identity.generator;
    return false;
  }

  /** False (and the stream ended) once the client's PAK no longer authenticates. */
  private async stillValid(client: Client): Promise<boolean> {
    if (await this.options.auth.resolve(client.pakHash)) return true;
    this.clients.delete(client);
    client.res.end();
    return false;
  }

  private async broadcast(kind: 'event' | 'audit', envelope: Envelope): Promise<void> {
    for (const client of this.clients) {
      try {
        if ((await this.visible(client, kind, envelope)) && (await this.stillValid(client))) send(client.res, kind, envelope);
      } catch (err) {
        this.options.logger.warn({ err }, 'console event filter failed');
      }
    }
  }

  private subscribe(): void {
    const { nc, logger } = this.options;
    try {
      this.subscriptions = (['event', 'audit'] as const).map((kind) =>
        nc.subscribe(kind === 'event' ? SUBJECTS.eventsAll : SUBJECTS.auditAll, {
          callback: (err, msg) => {
            if (err || this.clients.size === 0) return;
            let envelope: Envelope;
            try {
              envelope = msg.json<Envelope>();
            } catch {
              return;
            }
            void this.broadcast(kind, envelope);
          },
        }),
      );
    } catch (err) {
      // A closed or draining connection (shutting down): the stream opens, without hints.
      logger.warn({ err }, 'console stream opened without live hints');
    }
  }

  private unsubscribe(): void {
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.subscriptions = [];
  }
}

/** Built once per process by mountConsole (mount.ts). */
export function createLiveEvents(options: LiveEventsOptions): LiveEvents {
  return new ConsoleStreams(options);
}

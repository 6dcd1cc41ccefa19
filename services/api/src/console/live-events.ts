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

// eslint-disable-next-line max-lines-per-function -- one closure over the state every open stream shares (NATS subscriptions, per-PAK counts); its split into named parts comes with the api restructuring
export function createLiveEvents(options: {
  nc: NatsConnection;
  db: Queryable;
  auth: Authenticator;
  logger: Logger;
  shutdownSignal: AbortSignal;
  /** Set to the number of open streams (brokkr_console_streams). */
  openStreams: { set(value: number): void };
  /** Streams per PAK: one over the limit is answered 429 `too_many_streams`. */
  streams: StreamQuota;
}): LiveEvents {
  const { nc, auth, logger } = options;
  const clients = new Set<Client>();
  const owners = new StackOwners(options.db);
  const stopForgetting = onStackInvalidation(nc, logger, (stackId) => owners.forget(stackId));

  async function visible(client: Client, kind: 'event' | 'audit', envelope: Envelope): Promise<boolean> {
    const { identity } = client;
    if (identity.admin) return true;
    if (kind === 'audit') return false;
    const data = envelope.data ?? {};
    if (identity.agent) return data.agent_id === identity.agent;
    if (identity.generator && data.stack_id) return (await owners.ownerOf(data.stack_id)) === identity.generator;
    return false;
  }

  function send(res: Response, kind: string, payload: unknown): void {
    res.write(`event: ${kind}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  /** False (and the stream ended) once the client's PAK no longer authenticates. */
  async function stillValid(client: Client): Promise<boolean> {
    if (await auth.resolve(client.pakHash)) return true;
    clients.delete(client);
    client.res.end();
    return false;
  }

  async function broadcast(kind: 'event' | 'audit', envelope: Envelope): Promise<void> {
    for (const client of clients) {
      try {
        if ((await visible(client, kind, envelope)) && (await stillValid(client))) send(client.res, kind, envelope);
      } catch (err) {
        logger.warn({ err }, 'console event filter failed');
      }
    }
  }

  // Subscribed only while a browser is connected: a plain subscription to `brokkr.events.>` makes
  // nats-server send this process a copy of every event it publishes (and every other replica's),
  // which without a console client is parsed only to be dropped (bench:api: a third of the NATS
  // traffic of an agent event report).
  let subscriptions: { unsubscribe(): void }[] = [];
  function subscribe(): void {
    try {
      subscriptions = (['event', 'audit'] as const).map((kind) =>
        nc.subscribe(kind === 'event' ? SUBJECTS.eventsAll : SUBJECTS.auditAll, {
          callback: (err, msg) => {
            if (err || clients.size === 0) return;
            let envelope: Envelope;
            try {
              envelope = msg.json<Envelope>();
            } catch {
              return;
            }
            void broadcast(kind, envelope);
          },
        }),
      );
    } catch (err) {
      // A closed or draining connection (shutting down): the stream opens, without hints.
      logger.warn({ err }, 'console stream opened without live hints');
    }
  }
  function unsubscribe(): void {
    for (const sub of subscriptions) sub.unsubscribe();
    subscriptions = [];
  }

  // A rotated or deleted PAK must not keep watching: it is re-resolved (from the cache, which
  // rotation invalidates on every replica) before each message and on every keep-alive.
  const keepalive = setInterval(() => {
    for (const client of clients) {
      void stillValid(client).then(
        (valid) => valid && client.res.write(': keep-alive\n\n'),
        () => client.res.write(': keep-alive\n\n'),
      );
    }
  }, KEEPALIVE_MS);
  keepalive.unref();

  const closeAll = () => {
    for (const client of clients) client.res.end();
    clients.clear();
  };
  options.shutdownSignal.addEventListener('abort', closeAll, { once: true });

  return {
    stream(req, res, identity) {
      const release = options.streams.require('event_stream', identity);
      res.once('close', release);
      // The authentication middleware already resolved this header, so it hashes.
      const pakHash = hashPresentedPak(pakFromAuthorization(req.headers.authorization ?? '')) ?? '';
      res.status(200).set({
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
        // Tells nginx-style proxies not to buffer the stream.
        'X-Accel-Buffering': 'no',
      });
      res.flushHeaders();
      const client: Client = { identity, pakHash, res };
      if (subscriptions.length === 0) subscribe();
      clients.add(client);
      options.openStreams.set(clients.size);
      res.on('close', () => {
        clients.delete(client);
        options.openStreams.set(clients.size);
        if (clients.size === 0) unsubscribe();
      });
      // `ready` promises that changes made from now on reach this stream, whichever replica makes
      // them: the flush is a round trip to nats-server, so the subscription is in place by then.
      const ready = () => {
        if (clients.has(client)) send(res, 'ready', { admin: identity.admin, generator: identity.generator, agent: identity.agent });
      };
      nc.flush().then(ready, ready);
    },
    close() {
      clearInterval(keepalive);
      stopForgetting();
      unsubscribe();
      closeAll();
    },
  };
}

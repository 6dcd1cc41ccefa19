import { readFileSync } from 'node:fs';
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
  type Status,
} from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsAuth, NatsSettings } from '@brokkr/config';
import { DependencyError } from '@brokkr/errors';
import type { Logger } from '@brokkr/logger';

/** The server (one URL or a comma-separated list), credentials and TLS (@brokkr/config's natsSettingsFrom). */
export interface BusSettings extends NatsSettings {
  /** Connection name shown by the server (`nats server report connections`). */
  name: string;
  logger: Logger;
  /** How long close() lets drain() run before it closes the connection hard. */
  drainTimeoutMs?: number;
  /**
   * Where replies to this connection's requests arrive (default `_INBOX`). Hub services use their
   * own (`natsInboxPrefix`), which their NATS user alone may subscribe to.
   */
  inboxPrefix?: string;
}

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Drains subscriptions and pending publishes, then closes. Safe to call more than once. */
  close(): Promise<void>;
}

type Level = 'debug' | 'info' | 'warn' | 'error';

const STATUS_LEVEL: Partial<Record<Status['type'], Level>> = {
  disconnect: 'warn',
  reconnecting: 'debug',
  reconnect: 'info',
  ldm: 'warn',
  error: 'error',
  staleConnection: 'warn',
  slowConsumer: 'warn',
  forceReconnect: 'info',
  update: 'debug',
  close: 'info',
};

function statusFields(status: Status): Record<string, unknown> {
  switch (status.type) {
    case 'disconnect':
    case 'reconnect':
    case 'ldm':
      return { server: status.server };
    case 'error':
      return { err: status.error };
    case 'slowConsumer':
      return { subject: status.sub.getSubject(), pending: status.pending };
    default:
      return {};
  }
}

async function logStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  for await (const status of nc.status()) {
    const level = STATUS_LEVEL[status.type];
    if (level) logger[level]({ nats: status.type, ...statusFields(status) }, `nats ${status.type}`);
  }
}

/** NATS URLs may carry `user:password@`; error messages and logs must not. */
function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^/@]*@/g, '//');
}

function readSecretFile(what: string, file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new DependencyError(`cannot read the NATS ${what} file ${file}`, { cause: err });
  }
}

/** The client options that prove who we are; files are read here, so a rotated file counts at the next start. */
function authOptions(auth: NatsAuth | undefined): Partial<NodeConnectionOptions> {
  if (!auth) return {};
  if ('user' in auth) return { user: auth.user, pass: auth.password };
  if ('token' in auth) return { token: auth.token };
  if ('nkeySeedFile' in auth) {
    const seed = new TextDecoder().decode(readSecretFile('NKey seed', auth.nkeySeedFile)).trim();
    return { authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)) };
  }
  return { authenticator: credsAuthenticator(readSecretFile('credentials', auth.credsFile)) };
}

async function drain(nc: NatsConnection, timeoutMs: number): Promise<void> {
  if (nc.isClosed()) return;
  let timer: NodeJS.Timeout | undefined;
  // drain() waits for the server; while disconnected that could be forever, so bound it.
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const outcome = await Promise.race([nc.drain().then(() => 'drained' as const), timeout]);
    if (outcome === 'timeout' && !nc.isClosed()) await nc.close();
  } catch {
    if (!nc.isClosed()) await nc.close();
  } finally {
    clearTimeout(timer);
  }
}

/** A core NATS connection (no JetStream): for traffic that must not queue behind another's. */
export interface CoreConnection {
  nc: NatsConnection;
  /** Drains, then closes. Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * Connects to NATS and reconnects forever: a NATS outage degrades the services (hints are
 * lost, publishes fail and fall back to the outbox) but never stops them.
 */
export async function connectNats(settings: BusSettings): Promise<CoreConnection> {
  const logger = settings.logger.child({ component: 'nats' });
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: settings.url.split(',').map((s) => s.trim()),
      name: settings.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Otherwise every request builds an Error up front only to give a possible timeout a stack
      // trace, for a trace that points into the client anyway. JetStream publishes no longer go
      // through requests (AckPublisher, ADR 0024); JetStream API calls still do.
      noAsyncTraces: true,
      ...(settings.inboxPrefix ? { inboxPrefix: settings.inboxPrefix } : {}),
      ...authOptions(settings.auth),
      // An object (even empty) makes the client refuse a server that does not speak TLS.
      ...(settings.tls ? { tls: settings.tls } : {}),
    });
  } catch (err) {
    if (err instanceof DependencyError) throw err;
    // The server's reason ("Authorization Violation", a certificate error) is what the operator needs.
    const reason = err instanceof Error ? `: ${withoutCredentials(err.message)}` : '';
    throw new DependencyError(`cannot connect to NATS at ${withoutCredentials(settings.url)}${reason}`, { cause: err });
  }
  logStatus(nc, logger).catch((err: unknown) => logger.error({ err }, 'nats status watcher failed'));
  let closing: Promise<void> | undefined;
  return { nc, close: () => (closing ??= drain(nc, settings.drainTimeoutMs ?? 10_000)) };
}

/** connectNats, with JetStream: the connection a service's events, audit and hints use. */
export async function connectBus(settings: BusSettings): Promise<Bus> {
  const { nc, close } = await connectNats(settings);
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
  } catch (err) {
    await nc.close();
    throw new DependencyError('NATS JetStream is not available', { cause: err });
  }
  settings.logger.child({ component: 'nats' }).info({ server: nc.getServer() }, 'connected to nats');
  return { nc, js: jetstream(nc), jsm, close };
}

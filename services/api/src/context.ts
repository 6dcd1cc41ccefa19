import type { Bus } from '@brokkr/bus';
import type { WebhookKey } from '@brokkr/crypto';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Auditor } from './audit/auditor.ts';
import type { Authenticator } from './auth/authenticator.ts';
import type { ClientAddress } from './auth/client-info.ts';
import type { AgentSockets } from './delivery/agent-sockets/registry.ts';
import type { NotifyAgents } from './delivery/send.ts';
import type { TargetStateCache } from './delivery/target-state/answer-cache.ts';
import type { Waiters } from './delivery/waiters.ts';
import type { OutboxPublisher } from './events/outbox-publisher.ts';
import type { Transact } from './events/transact.ts';
import type { ApiMetrics } from './metrics/api-metrics.ts';
import type { StreamQuota } from './limits/stream-quota.ts';
import type { Feeds } from './feeds/feeds.ts';
import type { Rendering } from './rendering/rendering.ts';
import type { ApiSettings } from './settings/api-settings.ts';
import type { ConfigReloader } from './settings/config-reload.ts';
import type { YamlValidator } from './yaml/index.ts';

/**
 * Everything a route handler may use; built once per process by `createContext`. Every field is
 * declared here, and each field's type comes from a layer below this file (the delivery, the
 * feeds and the rest): test/layers.unit.test.ts checks that no file uses a field of a layer above its
 * own.
 */
export interface ApiContext {
  settings: ApiSettings;
  logger: Logger;
  db: Db;
  bus: Bus;
  metrics: ApiMetrics;
  /** Who sent a request, as audit entries record it: behind a trusted proxy only (auth/client-info.ts). */
  clientAddress: ClientAddress;
  /** PAK → identity, with the cross-replica cache; `auth.invalidate(hashes)` after rotation/deletion. */
  auth: Authenticator;
  /** Records an audit entry (JetStream, falling back to Postgres). Await it; it never throws. */
  audit: Auditor;
  /** One transaction with outbox events, agent notifications and after-commit hooks. */
  transact: Transact;
  /** Wakes the long-polls of these agents on every replica (outside a transaction). */
  notifyAgents: NotifyAgents;
  outbox: OutboxPublisher;
  /** Aborted when the process starts shutting down: long-polls should answer at once. */
  shutdownSignal: AbortSignal;
  /** Checks deployment-object YAML on worker threads (bounded, off the event loop). */
  yaml: YamlValidator;
  /**
   * Encrypts and decrypts webhook URLs, auth headers and signing secrets. One per process: without
   * a configured key Brokkr mints a random one at start, and every request must use that one.
   */
  webhookKey: WebhookKey;
  /** Requests of this process held waiting for an agent (long-polls): the delivery wakes them. */
  waiters: Waiters;
  /** Target-state answers kept current by the delivery (its first stage). */
  targetStates: TargetStateCache;
  /** The agent WebSockets (`/internal/ws/agent`) this replica holds; the delivery sends them hints. */
  agentSockets: AgentSockets;
  /** The chart and overlay renderer (sandboxed engines; its engine unset when not installed), the source store, the render sweeper. */
  rendering: Rendering;
  /** Cluster events and the fleet view of this process: live subscribers, WebSocket presence, the cluster-event writer. */
  feeds: Feeds;
  /** Open WebSockets, event streams and held long-polls per PAK on this replica (429 beyond the limits). */
  streams: StreamQuota;
  /** The reloadable settings in force, for POST /admin/config/reload. */
  configReloader: ConfigReloader;
}

import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import { maintenanceConfigSchema, parseEnv, type MaintenanceConfig } from '@brokkr/config';
import { connectBus, ensureStreams, type Bus } from '@brokkr/bus';
import { createDb, type Db } from '@brokkr/db';
import { createLogger } from '@brokkr/logger';
import type { HubContext } from '@brokkr/runtime';
import { createMetricsRegistry, type Registry } from '@brokkr/telemetry';
import { serviceBusSettings, testOnlyBusSettings } from '@brokkr/testkit';
import { startMaintenance, type Maintenance, type MaintenanceOptions } from '../src/index.ts';

/** Everything startMaintenance needs, wired to a real Postgres database and NATS server. */
export interface Replica {
  db: Db;
  /** The test's own connection (the test-only NATS user), for watching what maintenance sends. */
  bus: Bus;
  metrics: Registry;
  ctx: HubContext<MaintenanceConfig>;
  /** JSON log lines written so far. */
  logs: string[];
  close(): Promise<void>;
}

export async function createReplica(dbUrl: string, natsUrl: string, env: Record<string, string> = {}): Promise<Replica> {
  const config = parseEnv(maintenanceConfigSchema, { BROKKR__DATABASE__URL: dbUrl, BROKKR__NATS__URL: natsUrl, ...env });
  const logs: string[] = [];
  const sink = { write: (line: string) => logs.push(line) } as unknown as Writable;
  const logger = createLogger({ service: 'maintenance', level: 'info' }, sink);
  const db = createDb({ url: dbUrl, poolSize: 4 });
  // Maintenance's code runs as the maintenance user, so it meets the permissions it has in production.
  const own = await connectBus({ ...serviceBusSettings(natsUrl, 'maintenance'), name: 'maintenance-test', logger });
  await ensureStreams(own.jsm);
  const bus = await connectBus({ ...testOnlyBusSettings(natsUrl), name: 'maintenance-test-observer', logger });
  const metrics = createMetricsRegistry({ service: 'maintenance', defaultMetrics: false });
  return {
    db,
    bus,
    metrics,
    logs,
    ctx: { name: 'maintenance', config, logger, db, bus: own, metrics },
    async close() {
      await Promise.all([own.close(), bus.close()]);
      await db.close();
    },
  };
}

/** A maintenance instance with no timers: tests drive ticks with `tick(task)`. */
export function manual(replica: Replica, env: Record<string, string> = {}, options: MaintenanceOptions = {}): Promise<Maintenance> {
  return startMaintenance(replica.ctx, { tasks: [], env, ...options });
}

/** The value of one series of a metric in a registry (0 when absent). */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
  return found?.value ?? 0;
}

/** The rows the maintenance tasks need to exist first (foreign keys). */
export async function seedAgentAndObject(db: Db): Promise<{ agentId: string; stackId: string; objectId: string }> {
  const suffix = randomUUID().slice(0, 8);
  const agent = await db.query<{ id: string }>(`INSERT INTO agents (name, cluster_name) VALUES ($1, 'c') RETURNING id`, [
    `agent-${suffix}`,
  ]);
  const generator = await db.query<{ id: string }>(`INSERT INTO generators (name) VALUES ($1) RETURNING id`, [`gen-${suffix}`]);
  const stack = await db.query<{ id: string }>(`INSERT INTO stacks (name, generator_id) VALUES ($1, $2) RETURNING id`, [
    `stack-${suffix}`,
    generator.rows[0]!.id,
  ]);
  const object = await db.query<{ id: string }>(
    `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum) VALUES ($1, 'kind: ConfigMap', 'x') RETURNING id`,
    [stack.rows[0]!.id],
  );
  return { agentId: agent.rows[0]!.id, stackId: stack.rows[0]!.id, objectId: object.rows[0]!.id };
}

export async function insertSubscription(db: Db): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO webhook_subscriptions (name, url_encrypted, event_types) VALUES ('s', '\\x00', ARRAY['*']) RETURNING id`,
  );
  return rows[0]!.id;
}

/** Inserts a delivery; `fields` are SQL expressions (e.g. `now() - interval '1 minute'`). */
export async function insertDelivery(db: Db, subscriptionId: string, fields: Record<string, string>): Promise<string> {
  const columns = ['subscription_id', 'event_type', 'event_id', 'payload', ...Object.keys(fields)];
  const values = [`'${subscriptionId}'`, `'stack.created'`, `gen_random_uuid()`, `'{}'`, ...Object.values(fields)];
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (${columns.join(', ')}) VALUES (${values.join(', ')}) RETURNING id`,
  );
  return rows[0]!.id;
}

export async function statusOf(db: Db, table: string, id: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.query(`SELECT * FROM ${table} WHERE id = $1`, [id]);
  return rows[0];
}

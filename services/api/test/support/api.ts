import pg from 'pg';
import { freePort, spawnService, type RunningService, type TestDatabase, type TestInfra } from '@brokkr/testkit';
import { generatePak } from '@brokkr/pak';
import { ApiClient } from './client.ts';

export interface ApiProcess {
  url: string;
  service: RunningService;
  port: number;
  /** The metrics port's /metrics (BROKKR__BROKER__METRICS_PORT): every series, agent names included. */
  metricsUrl: string;
}

export interface TestApi extends ApiProcess {
  /** Admin PAK (its hash was given as BROKKR__BROKER__PAK_HASH). */
  adminPak: string;
  adminHash: string;
  /** Client authenticated as admin. */
  admin: ApiClient;
  /** Client with no PAK. */
  anonymous: ApiClient;
  database: TestDatabase;
  natsUrl: string;
  /** Direct SQL for assertions (a small pool on the test database). */
  sql: pg.Pool;
  /** Another api process on the same database and NATS (a second replica). */
  spawnReplica(env?: Record<string, string>): Promise<ApiProcess>;
  /** Stops every process and closes `sql`; the database and NATS belong to the block's useTestInfra. */
  stop(): Promise<void>;
}

export interface StartApiOptions {
  /** Extra environment for the api process(es). */
  env?: Record<string, string>;
}

/** Starts one api process with this environment (database, NATS, PAK hash); waits for /readyz. */
export async function spawnApi(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  let metricsPort = await freePort();
  while (metricsPort === port) metricsPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = await spawnService({
    service: 'api',
    env: {
      BROKKR__BROKER__HOST: '127.0.0.1',
      BROKKR__BROKER__PORT: String(port),
      BROKKR__BROKER__METRICS_PORT: String(metricsPort),
      ...env,
    },
    readyUrl: `${url}/readyz`,
  });
  return { url, service, port, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}

/**
 * An api process on the describe block's database and NATS server:
 *
 *     const infra = useTestInfra({ nats: true });
 *     before(async () => (api = await startTestApi(infra)));
 *     after(() => api?.stop());
 *
 * `stop()` ends the processes and the pool; useTestInfra drops the database and stops NATS after
 * the block's own after hooks.
 */
export async function startTestApi(infra: Pick<TestInfra, 'db' | 'nats'>, options: StartApiOptions = {}): Promise<TestApi> {
  const database = infra.db;
  const nats = infra.nats;
  const { pak: adminPak, hash: adminHash } = generatePak();
  const baseEnv = {
    BROKKR__DATABASE__URL: database.url,
    BROKKR__NATS__URL: nats.url,
    BROKKR__BROKER__PAK_HASH: adminHash,
    ...options.env,
  };
  const processes: ApiProcess[] = [];
  const sql = new pg.Pool({ connectionString: database.url, max: 3 });
  // The database is dropped WITH (FORCE) at teardown, which can cut a connection pg-pool is still
  // closing; that error is expected and must not fail the run.
  sql.on('error', () => undefined);
  try {
    processes.push(await spawnApi(baseEnv));
  } catch (err) {
    await sql.end().catch(() => undefined);
    throw err;
  }
  const first = processes[0]!;
  return {
    ...first,
    adminPak,
    adminHash,
    admin: new ApiClient(first.url, adminPak),
    anonymous: new ApiClient(first.url, null),
    database,
    natsUrl: nats.url,
    sql,
    async spawnReplica(env = {}) {
      const replica = await spawnApi({ ...baseEnv, ...env });
      processes.push(replica);
      return replica;
    },
    async stop() {
      await Promise.allSettled(processes.map((p) => p.service.stop()));
      await sql.end();
    },
  };
}

/**
 * `npm start`: the whole hub in one terminal. Starts (or uses) PostgreSQL and NATS, applies the
 * migrations, runs api, webhook-dispatcher, maintenance and audit-writer with prefixed logs, and the
 * renderer once its brokkr-render binary is built (scripts/lib/renderer.ts), serves examples/charts
 * as a chart repository on 127.0.0.1 that the api may fetch from (`chart repository: URL`), prints
 * the API URL and the admin PAK; then, unless `--no-cluster` or BROKKR_LOCAL_CLUSTER=false,
 * starts a local Kubernetes API server with an agent for it and prints a first deployment to paste.
 * `--require-signatures`: that agent applies only what the generator `local-dev` signed, with a key
 * made here and printed as `signing key: PATH` (docs/signatures.md).
 * Ctrl-C stops everything, in order, and removes every temporary directory.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startNats, startPostgres, freePort, repoRoot, type NatsHandle, type PostgresHandle } from '@brokkr/infra';
import { migrateLatest } from '@brokkr/db';
import { hubNatsServer, newNatsPasswords, type NatsUser } from '@brokkr/bus';
import { CHART_REPOSITORY_CIDR, startExampleCharts, type ExampleCharts } from './lib/chart-repository.ts';
import { startChild, type Child } from './lib/child.ts';
import { startLocalCluster, type LocalCluster } from './lib/local-cluster.ts';
import { startLocalRenderer, type LocalRenderer } from './lib/renderer.ts';

const HUB = ['api', 'webhook-dispatcher', 'maintenance', 'audit-writer'] as const;
const say = (line: string): void => void process.stdout.write(`\x1b[1m[brokkr]\x1b[0m ${line}\n`);

async function ensureDatabase(server: PostgresHandle): Promise<string> {
  if (server.external) return server.url;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query('CREATE DATABASE brokkr').finally(() => client.end());
  const url = new URL(server.url);
  url.pathname = '/brokkr';
  return url.toString();
}

/** The admin PAK the api minted on first start (in its PAK file), else the one given in BROKKR_ADMIN_PAK. */
async function adminPak(pakFile: string): Promise<{ pak?: string; line: string }> {
  const minted = await fs.readFile(pakFile, 'utf8').then(
    (t) => t.trim(),
    () => '',
  );
  if (minted) return { pak: minted, line: `admin PAK: ${minted}   (also in ${pakFile}, mode 0600)` };
  const given = process.env.BROKKR_ADMIN_PAK?.trim();
  if (given) return { pak: given, line: 'admin PAK: the one in BROKKR_ADMIN_PAK' };
  return process.env.BROKKR__BROKER__PAK_HASH
    ? { line: 'admin PAK hash configured: use the PAK you generated it from (set BROKKR_ADMIN_PAK for the local cluster)' }
    : { line: 'admin PAK: this database was initialised before; use the admin PAK you were given then (BROKKR_ADMIN_PAK)' };
}

/** `--no-cluster` or BROKKR_LOCAL_CLUSTER=false|0|no: the hub only. */
function wantsLocalCluster(): boolean {
  if (process.argv.includes('--no-cluster')) return false;
  return !/^(false|0|no|off)$/i.test(process.env.BROKKR_LOCAL_CLUSTER ?? '');
}

function maybeStartLocalCluster(
  apiUrl: string,
  pak: string | undefined,
  workDir: string,
  stopping: () => boolean,
): LocalCluster | undefined {
  if (!wantsLocalCluster()) return void say('local cluster: off (--no-cluster / BROKKR_LOCAL_CLUSTER)');
  if (!pak) return void say('local cluster: skipped, npm start does not know the admin PAK (set BROKKR_ADMIN_PAK)');
  return startLocalCluster({
    apiUrl,
    adminPak: pak,
    workDir,
    say,
    requireSignatures: process.argv.includes('--require-signatures'),
    onAgentExit: (code) => {
      if (!stopping()) say(`agent exited unexpectedly (code ${code}); the hub keeps running`);
    },
  });
}

/**
 * The NATS of this start: the one in BROKKR__NATS__URL (with the credentials the environment gives,
 * BROKKR__NATS__* as every service reads them), else a throwaway nats-server, the pinned release, with
 * the hub's users and permissions (@brokkr/bus natsAuthorizationConfig) and passwords made for this
 * run. Returns what each service needs to connect as its own user.
 */
async function startOwnNats(): Promise<{ nats: NatsHandle; envOf: (user: NatsUser) => Record<string, string> }> {
  if (process.env.BROKKR__NATS__URL) {
    say('using NATS from BROKKR__NATS__URL');
    return { nats: await startNats({ url: process.env.BROKKR__NATS__URL }), envOf: () => ({}) };
  }
  say('starting a throwaway nats-server with JetStream, a user per service…');
  const passwords = newNatsPasswords();
  const nats = await startNats(hubNatsServer(passwords));
  const envOf = (user: NatsUser) => ({ BROKKR__NATS__USER: user, BROKKR__NATS__PASSWORD: passwords[user] });
  say(`NATS: ${nats.url}   read-only user for npm run nats:tail and your consumers:`);
  say(`  BROKKR__NATS__USER=integration BROKKR__NATS__PASSWORD=${passwords.integration} npm run nats:tail -- --server ${nats.url}`);
  return { nats, envOf };
}

/**
 * A free port no other service of this start was given: the services bind theirs only once
 * started, so the OS may hand the same free port out twice in a row.
 */
async function distinctFreePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

/** What every hub service is given (each reads the settings of its own schema). */
function hubEnv(o: { databaseUrl: string; natsUrl: string; apiPort: number; pakFile: string }): Record<string, string> {
  return {
    BROKKR__DATABASE__URL: o.databaseUrl,
    BROKKR__NATS__URL: o.natsUrl,
    BROKKR__LOG__FORMAT: process.env.BROKKR__LOG__FORMAT ?? 'text',
    BROKKR__BROKER__PORT: String(o.apiPort),
    BROKKR__BROKER__PAK_HASH: process.env.BROKKR__BROKER__PAK_HASH || '',
    BROKKR__BROKER__PAK_FILE: o.pakFile,
    // The api may fetch charts from npm start's chart repository (and from no other private address).
    BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS: process.env.BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS ?? CHART_REPOSITORY_CIDR,
  };
}

/** api, webhook-dispatcher, maintenance and audit-writer, each added to `children` as it starts; any of them exiting stops everything. */
async function startHubServices(o: {
  common: Record<string, string>;
  envOf: (user: NatsUser) => Record<string, string>;
  taken: Set<number>;
  children: Child[];
  crashed: (service: string, code: number | null) => void;
}): Promise<void> {
  for (const service of HUB) {
    const env = {
      ...o.common,
      ...o.envOf(service),
      ...(service === 'api' ? {} : { BROKKR__HEALTH__PORT: String(await distinctFreePort(o.taken)) }),
    };
    o.children.push(startChild({ service, env, onExit: (code) => o.crashed(service, code) }));
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const children: Child[] = [];
  let postgres: PostgresHandle | undefined;
  let nats: NatsHandle | undefined;
  let cluster: LocalCluster | undefined;
  let renderer: LocalRenderer | undefined;
  let charts: ExampleCharts | undefined;
  let stopping = false;
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-start-'));

  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping services…');
    await Promise.all([cluster?.stop(), renderer?.stop(), charts?.repository.close(), ...children.map((c) => c.stop())]);
    say('stopping NATS and PostgreSQL…');
    await nats?.stop();
    await postgres?.stop();
    await fs.rm(workDir, { recursive: true, force: true });
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  try {
    say(process.env.BROKKR__DATABASE__URL ? 'using PostgreSQL from BROKKR__DATABASE__URL' : 'starting a throwaway PostgreSQL…');
    postgres = await startPostgres({ url: process.env.BROKKR__DATABASE__URL });
    const databaseUrl = await ensureDatabase(postgres);
    const own = await startOwnNats();
    nats = own.nats;
    say('applying migrations…');
    const applied = await migrateLatest({ url: databaseUrl, schema: process.env.BROKKR__DATABASE__SCHEMA });
    say(applied.length ? `applied ${applied.length} migration(s)` : 'migrations already up to date');

    const apiPort = Number(process.env.BROKKR__BROKER__PORT ?? 3000);
    const pakFile = path.join(workDir, 'admin-pak.txt');
    const common = hubEnv({ databaseUrl, natsUrl: nats.url, apiPort, pakFile });
    const taken = new Set<number>([apiPort]);
    const crashed = (service: string, code: number | null) => {
      if (stopping) return;
      say(`${service} exited unexpectedly (code ${code}); stopping everything`);
      void stopAll(1);
    };
    await startHubServices({ common, envOf: own.envOf, taken, children, crashed });
    renderer = startLocalRenderer({
      databaseUrl,
      healthPort: await distinctFreePort(taken),
      say,
      onExit: (code) => {
        if (!stopping)
          say(`renderer exited unexpectedly (code ${code}); the hub keeps running, charts and overlays get 503 renderer_unavailable`);
      },
    });
    charts = await startExampleCharts();
    await waitForReady(`http://127.0.0.1:${apiPort}/readyz`, 60_000);
    say(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    say(`API: http://127.0.0.1:${apiPort}/api/v1   docs: http://127.0.0.1:${apiPort}/docs`);
    say(`console: http://127.0.0.1:${apiPort}/ui   (sign in with the admin PAK below)`);
    say(`chart repository: ${charts.repository.url} (${charts.describe})`);
    const admin = await adminPak(pakFile);
    say(admin.line);
    say('press Ctrl-C to stop everything');
    cluster = maybeStartLocalCluster(`http://127.0.0.1:${apiPort}/api/v1`, admin.pak, workDir, () => stopping);
  } catch (err) {
    say(`start failed: ${err instanceof Error ? err.message : String(err)}`);
    await stopAll(1);
  }
}

async function waitForReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the api did not become ready at ${url} within ${timeoutMs / 1000} s`);
}

process.chdir(repoRoot);
await main();

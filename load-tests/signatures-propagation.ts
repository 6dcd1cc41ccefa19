/**
 * bench:signatures, second part: propagation with signatures off and on, in one run. The real api
 * (built, with its `npm start` flags), PostgreSQL and NATS on this machine; simulated WebSocket
 * agents in child processes as in bench:agents (agents-sim.ts: they take a new object from its
 * `target_state_patch` frame). Every simulated agent dials as our agent with a trust policy does,
 * asking for signatures (`target-state-signatures`; its fetches send `signatures=true`), so the
 * hub carries each object's stored signature in the frame (and in the answer). One stack targeted
 * by every agent gets a new deployment object, alternately:
 *
 *   off  unsigned: measured until every agent HOLDS it (bench:agents' figure);
 *   on   signed by a generator of the agents' root (its signature stored first, as
 *        `brokkr apply --sign` does): measured until every agent holds it AND has checked the
 *        signature that came with it (@brokkr/trust `checkIntent`), as our agent's trust gate
 *        does. No request is made for it: the trust metadata is read on its own signal, not per
 *        change, and `GET /agents/{id}/signatures` only when no signature came with the object
 *        (counted as `fallbacks`; 0 is expected). Before the signatures were carried (the figures
 *        of docs/perf/2026-11-28-signature-verification.md) each agent made both requests here.
 *
 * The "off" agents ask for signatures too (one fleet serves both modes): an agent without a trust
 * policy does not ask, and is served exactly what it was before; what asking costs the hub for
 * unsigned content (one read of the object's signature for all agents, a hash per answer) is in
 * the off figures. BENCH_PROPAGATION_AGENTS (signatures.ts) sets the fleet's size.
 *
 * Per change: p50 / p99 / max from the POST, the hub's CPU (api + PostgreSQL + nats-server) and the
 * simulators' CPU. The checks a real fleet spreads over its clusters run here in the simulator
 * processes on the same cores as the hub.
 */
import { TestClient } from '@brokkr/testkit';
import { buildRoot, generateSigningKey, signIntent, type Root } from '@brokkr/trust';
import { apiStartFlags, buildApi, spawnApi, type ApiProcess } from './api-env.ts';
import { epochNow, natsServerPid, postmasterPid, processStats, seedAgents, treeCpuSeconds } from './agents-support.ts';
import { SimFleet, type SimAgentSpec, type SimVerify } from './agents-sim.ts';
import { adminPak, freshStack, KEY_HEX, percentile, startPostgresServer, type Stack } from './webhooks-support.ts';

const HELD_TIMEOUT_MS = 120_000;
const AGENTS_PER_SIM_PROCESS = 9000;

export interface PropagationRow {
  mode: 'off' | 'on';
  p50: number;
  p99: number;
  max: number;
  postsMs: number;
  /** Hub CPU per change, seconds: api, PostgreSQL, nats-server. */
  api: number;
  pg: number;
  nats: number;
  simCpu: number;
  missed: number;
  refused: number;
  /** "on": objects whose signature did not come with them and was asked for (GET /agents/{id}/signatures). */
  fallbacks: number;
}

interface Hub {
  stack: Stack;
  api: ApiProcess;
  admin: TestClient;
}

const cpuOf = (hub: Hub, pgPid: number, natsPid: number) => ({
  api: processStats(hub.api.pid).cpuSeconds,
  pg: treeCpuSeconds(pgPid),
  nats: treeCpuSeconds(natsPid),
});

async function startHub(stack: Stack): Promise<Hub> {
  const { pak, hash } = adminPak();
  const env = {
    BROKKR__DATABASE__URL: stack.dbUrl,
    BROKKR__NATS__URL: stack.natsUrl,
    BROKKR__BROKER__HOST: '127.0.0.1',
    BROKKR__BROKER__PAK_HASH: hash,
    BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
    BROKKR__LOG__LEVEL: 'warn',
  };
  const api = await spawnApi(env, apiStartFlags());
  return { stack, api, admin: new TestClient(api.url, pak) };
}

/** The generator `ci` of a root every simulated agent checks against; its key signs for every stack. */
function trust(): { root: Root; sign: (stackId: string, content: string, version: number) => unknown } {
  const key = generateSigningKey();
  const root = buildRoot({
    version: 1,
    rootKeys: [generateSigningKey().privateKey],
    threshold: 1,
    generators: [{ name: 'ci', keys: [key.privateKey], stacks: ['*'] }],
  });
  return {
    root,
    sign: (stackId, content, version) =>
      signIntent(content, { stack: stackId, generator: 'ci', version, kind: 'raw', issuedAt: new Date().toISOString() }, key.privateKey),
  };
}

/** About 1 KiB of YAML, different each time. */
const content = (n: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: bench-${n}, namespace: default }\ndata:\n` +
  Array.from({ length: 24 }, (_, i) => `  key-${i}: "value ${i} of change ${n} ${Math.random()}"\n`).join('');

interface Change {
  fleet: SimFleet;
  hub: Hub;
  pids: { pg: number; nats: number };
  stackId: string;
  trust: ReturnType<typeof trust>;
  post: (yaml: string) => Promise<string>;
}

/** Change `i`: odd ones unsigned (off), even ones signed (on); timed from the first request of the change. */
async function measureChange(c: Change, i: number): Promise<PropagationRow> {
  const mode = i % 2 === 1 ? 'off' : 'on';
  const yaml = content(i);
  const verify: SimVerify | undefined = mode === 'on' ? { stackId: c.stackId, content: yaml, root: c.trust.root } : undefined;
  const before = cpuOf(c.hub, c.pids.pg, c.pids.nats);
  await c.fleet.arm(verify);
  const t0 = epochNow();
  if (mode === 'on') await c.hub.admin.must('POST', `/stacks/${c.stackId}/signatures`, { signature: c.trust.sign(c.stackId, yaml, i) });
  const id = await c.post(yaml);
  const postsMs = epochNow() - t0;
  const got = await c.fleet.collect([id], HELD_TIMEOUT_MS);
  const after = cpuOf(c.hub, c.pids.pg, c.pids.nats);
  const times = got.held.map((t) => t - t0).sort((a, b) => a - b);
  return {
    mode,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    max: times.at(-1) ?? NaN,
    postsMs,
    api: after.api - before.api,
    pg: after.pg - before.pg,
    nats: after.nats - before.nats,
    simCpu: got.cpuSeconds,
    missed: got.missed,
    refused: got.refused ?? 0,
    fallbacks: got.fallbacks ?? 0,
  };
}

/**
 * Runs `changes` changes of each mode, alternating (off, on, off, on …) so that both meet the same
 * machine; `log` gets a line per change.
 */
export async function measurePropagation(count: number, changes: number, log: (line: string) => void): Promise<PropagationRow[]> {
  log('building the api (tsc -b services/api)');
  buildApi();
  const server = await startPostgresServer();
  const stack = await freshStack(server);
  const hub = await startHub(stack);
  const fleet = new SimFleet(Math.ceil(count / AGENTS_PER_SIM_PROCESS));
  try {
    const seeded = await seedAgents(stack.pool, count, 1);
    const stackId = seeded.all;
    const post = async (yaml: string) =>
      (await hub.admin.must<{ id: string }>('POST', `/stacks/${stackId}/deployment-objects`, { yaml_content: yaml })).id;
    await post(content(0)); // agents hold a first object: a measured change is a new version
    const specs: SimAgentSpec[] = seeded.agents.map((a, index) => ({ index, kind: 'ws', url: hub.api.url, signatures: true, ...a }));
    const connectStart = epochNow();
    await fleet.connect(specs, 300_000);
    log(`  ${count} WebSocket agents connected in ${((epochNow() - connectStart) / 1000).toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, 10_000)); // their first fetches settle
    const pids = { pg: await postmasterPid(stack.pool), nats: natsServerPid(stack.natsUrl) };
    const rows: PropagationRow[] = [];
    const change: Change = { fleet, hub, pids, stackId, trust: trust(), post };
    for (let i = 1; i <= changes * 2; i++) {
      const row = await measureChange(change, i);
      rows.push(row);
      log(
        `  change ${i} (signatures ${row.mode}): all ${row.mode === 'on' ? 'checked' : 'hold'} p50 ${row.p50.toFixed(0)} / p99 ${row.p99.toFixed(0)} / max ${row.max.toFixed(0)} ms; ` +
          `hub CPU ${row.api.toFixed(2)} + ${row.pg.toFixed(2)} + ${row.nats.toFixed(2)} s, simulators ${row.simCpu.toFixed(2)} s; ` +
          `missed ${row.missed}, refused ${row.refused}, signatures asked for ${row.fallbacks}`,
      );
      await new Promise((r) => setTimeout(r, 2000));
    }
    return rows;
  } catch (err) {
    log(`  api exit code ${hub.api.child.exitCode ?? '–'}; its last output:\n${hub.api.output().slice(-3000)}`);
    throw err;
  } finally {
    await fleet.stop();
    await hub.api.stop();
    await stack.close();
    await server.stop();
  }
}

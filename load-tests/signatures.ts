/**
 * `npm run bench:signatures`: what signed intent costs an agent (docs/signatures.md), measured on
 * the checks its trust gate makes before the reconciler sees an object (@brokkr/trust `checkIntent`:
 * the bundle parsed, the DSSE signature verified against the generator's key or the keyless
 * certificate chain and transparency-log entry, the statement read, the content hashed and compared,
 * scope, targeting, version and freshness judged). In one process, no hub:
 *
 *   - per deployment object of a usual size (a ConfigMap, a Service and a Deployment, about 1 KiB):
 *     p50 / p95 / p99 for a signature by an Ed25519 key, an ECDSA P-256 key, and a keyless one
 *     (a Fulcio certificate and a Rekor entry of sigstore-js, offline through @sigstore/mock);
 *   - one stack of 1,000 Kubernetes objects (one deployment object of 1,000 documents): p50 / p95;
 *   - a target state of 1,000 stacks, each with its own signed object, checked one after another
 *     (what the gate does when an agent starts, or its trust metadata changes): the whole screen.
 *
 * Beside each, the same objects unchecked cost nothing here: without a trust policy the gate is not
 * in the path. Then (BENCH_PROPAGATION_AGENTS, 10,000; 0: skip) propagation to that many simulated
 * agents with signatures off and on, in one run (signatures-propagation.ts), BENCH_CHANGES (3) of
 * each. Wall time per run (p50/p95/p99/max) and this process's CPU per run (mean: on a shared
 * machine the wall time also holds waits for a core), and what everything else on the machine
 * used meanwhile. Goals: ≤ 5 ms per object p95, ≤ 1 s for a 1,000-object stack.
 * Each keyless check gets a copy of its bundle the checker has not seen: its certificate is parsed,
 * chained to the Fulcio root and its SCT checked every time (nothing is kept per leaf certificate).
 * Environment: BENCH_ITERATIONS (2000 per-object checks per key kind; 200 keyless, 50 of the big stack),
 * BENCH_ONLY=keyless (the keyless checks alone, nothing else: to profile them).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import {
  buildRoot,
  checkIntent,
  generateSigningKey,
  intentStatement,
  keylessTrustMaterial,
  sha256Hex,
  signIntent,
  type IntentPredicate,
  type KeyAlgorithm,
  type Root,
  type ServedObject,
  type TrustView,
} from '@brokkr/trust';
import { startKeylessMock } from '../shared/trust/test/support/sigstore-mock.ts';
import { measurePropagation, type PropagationRow } from './signatures-propagation.ts';
import { machine, percentile } from './webhooks-support.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);
const AGENTS = Number(process.env.BENCH_PROPAGATION_AGENTS ?? 10_000);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 3);
/** `keyless`: only the keyless checks (for profiling them: --cpu-prof, --trace-gc); anything else: every check. */
const ONLY = process.env.BENCH_ONLY ?? '';
const KEYLESS_ITERATIONS = Math.max(20, Math.round(ITERATIONS / 10));
const BIG_ITERATIONS = Math.max(10, Math.round(ITERATIONS / 40));
const STACKS = 1000;
const SCREEN_ROUNDS = 10;
const ISSUER = 'https://token.actions.githubusercontent.com';
const SUBJECT = 'https://github.com/acme/app/.github/workflows/deploy.yml@refs/heads/main';
const me = { name: 'edge-1', cluster: 'eu-west', labels: ['env-prod'] };
const log = (line: string) => process.stdout.write(`${line}\n`);

/** A ConfigMap, a Service and a Deployment named after `i`: about 1 KiB of YAML. */
function appYaml(i: number): string {
  return `apiVersion: v1
kind: ConfigMap
metadata: { name: app-${i}, namespace: team-a, labels: { app: app-${i} } }
data: { LOG_LEVEL: info, FEATURE_FLAGS: "a,b,c", GREETING: "hello from app ${i}" }
---
apiVersion: v1
kind: Service
metadata: { name: app-${i}, namespace: team-a, labels: { app: app-${i} } }
spec: { selector: { app: app-${i} }, ports: [{ name: http, port: 80, targetPort: 8080 }] }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: app-${i}, namespace: team-a, labels: { app: app-${i} } }
spec:
  replicas: 3
  selector: { matchLabels: { app: app-${i} } }
  template:
    metadata: { labels: { app: app-${i} } }
    spec:
      containers:
        - name: web
          image: registry.example.com/acme/app:1.4.${i % 100}
          ports: [{ containerPort: 8080 }]
          envFrom: [{ configMapRef: { name: app-${i} } }]
          resources: { requests: { cpu: 100m, memory: 128Mi }, limits: { memory: 256Mi } }
          readinessProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 5 }
`;
}

/** One stack's 1,000 Kubernetes objects: 334 of the three-document apps, cut to 1,000 documents. */
function bigStackYaml(): string {
  const docs = Array.from({ length: 334 }, (_, i) => appYaml(i).split('---\n')).flat();
  return docs.slice(0, 1000).join('---\n');
}

const predicate = (stack: string, generator: string, version = 1): IntentPredicate => ({
  stack,
  generator,
  version,
  kind: 'raw',
  issuedAt: new Date().toISOString(),
});

function view(root: Root, keyless?: TrustView['keyless']): TrustView {
  return { root, revocations: undefined, stale: undefined, keyless, identity: me, now: new Date() };
}

interface Sample {
  label: string;
  /** Wall time of each run, sorted. */
  ms: number[];
  /** This process's CPU time per run, mean (on a loaded machine the wall time also holds the waits for a core). */
  cpuMs: number;
}

const cpuMsSince = (before: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
};

/** The object with a copy of its signature, as the agent holds after fetching it from the hub again. */
const fresh = (o: ServedObject): ServedObject => ({ ...o, signed: structuredClone(o.signed) });

/** Runs each check `iterations` times after a warm-up; every verdict must be ok (the bench would measure refusals otherwise). */
function time(label: string, v: TrustView, objects: ServedObject[], iterations: number): Sample {
  const check = (o: ServedObject) => {
    const verdict = checkIntent(v, o, undefined);
    if (!verdict.ok) throw new Error(`${label}: refused: ${verdict.refusal.reason}: ${verdict.refusal.detail}`);
  };
  for (let i = 0; i < Math.min(50, iterations); i++) check(fresh(objects[i % objects.length]!));
  // Each run gets its own copy of the signature: a signature checked before is not verified again (check.ts).
  const runs = Array.from({ length: iterations }, (_, i) => fresh(objects[i % objects.length]!));
  const ms: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    check(runs[i]!);
    ms.push(performance.now() - started);
  }
  return { label, ms: ms.sort((a, b) => a - b), cpuMs: cpuMsSince(cpu) / iterations };
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(3) : ms.toFixed(1));
function report(s: Sample): void {
  const [p50, p95, p99] = [50, 95, 99].map((p) => fmt(percentile(s.ms, p)));
  log(`| ${s.label} | ${s.ms.length} | ${p50} | ${p95} | ${p99} | ${fmt(s.ms.at(-1)!)} | ${fmt(s.cpuMs)} |`);
}

/** Signed objects for `stacks`, one per stack, each of `yamlOf(i)`. */
function keyedObjects(algorithm: KeyAlgorithm, stacks: string[], yamlOf: (i: number) => string) {
  const key = generateSigningKey(algorithm);
  const root = buildRoot({
    version: 1,
    rootKeys: [generateSigningKey().privateKey],
    threshold: 1,
    generators: [{ name: 'ci', keys: [key.privateKey], stacks: ['*'] }],
  });
  const objects = stacks.map((stack, i) => {
    const content = yamlOf(i);
    return { stackId: stack, content, deletion: false, signed: signIntent(content, predicate(stack, 'ci'), key.privateKey) };
  });
  return { root, objects };
}

async function keylessSample(stacks: string[]): Promise<Sample> {
  const mock = await startKeylessMock();
  try {
    const root = buildRoot({
      version: 1,
      rootKeys: [generateSigningKey().privateKey],
      threshold: 1,
      generators: [{ name: 'ci', keyless: [{ issuer: ISSUER, subject: 'https://github\\.com/acme/.*' }], stacks: ['*'] }],
    });
    const objects: ServedObject[] = [];
    for (const [i, stack] of stacks.slice(0, 20).entries()) {
      const content = appYaml(i);
      const signed = await mock.sign(intentStatement(sha256Hex(content), predicate(stack, 'ci')), { issuer: ISSUER, subject: SUBJECT });
      objects.push({ stackId: stack, content, deletion: false, signed });
    }
    return time(
      'keyless (Fulcio certificate + Rekor entry), 1 object, its certificate checked in full',
      view(root, keylessTrustMaterial(mock.trustedRoot)),
      objects,
      KEYLESS_ITERATIONS,
    );
  } finally {
    mock.close();
  }
}

/**
 * The gate's screen of a whole target state: every stack's object checked, one after another.
 * `again`: the signatures it checked before (the screen of every later change to the target
 * state); otherwise signatures it has not seen (an agent's start, or after a root rotation).
 */
function screen(label: string, v: TrustView, objects: ServedObject[], again: boolean): Sample {
  const rounds = SCREEN_ROUNDS;
  const ms: number[] = [];
  let cpuMs = 0;
  for (let r = 0; r < rounds + 1; r++) {
    const round = again ? objects : objects.map(fresh);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const o of round) if (!checkIntent(v, o, undefined).ok) throw new Error(`${label}: refused`);
    if (r === 0) continue; // the first round warms up
    ms.push(performance.now() - started);
    cpuMs += cpuMsSince(cpu);
  }
  return { label, ms: ms.sort((a, b) => a - b), cpuMs: cpuMs / rounds };
}

/** CPU seconds the whole machine spent busy (every core, /proc/stat), to say how much of the run other work took. */
function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields as [number, number, number, number, number, number, number, number];
  return (user + nice + system + irq + softirq + steal) / 100; // USER_HZ
}

/** Every check of the bench: keyed and keyless per object, the big stack, the screens of a whole target state. */
async function everySample(stacks: string[]): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (const algorithm of ['ed25519', 'ecdsa-p256'] as const) {
    const { root, objects } = keyedObjects(algorithm, stacks.slice(0, 100), appYaml);
    samples.push(time(`${algorithm} key, 1 object (${objects[0]!.content.length} B)`, view(root), objects, ITERATIONS));
  }
  samples.push(await keylessSample(stacks));
  const big = bigStackYaml();
  for (const algorithm of ['ed25519', 'ecdsa-p256'] as const) {
    const { root, objects } = keyedObjects(algorithm, stacks.slice(0, 1), () => big);
    samples.push(
      time(`${algorithm} key, 1 stack of 1,000 objects (${(big.length / 1024).toFixed(0)} KiB)`, view(root), objects, BIG_ITERATIONS),
    );
  }
  const { root, objects } = keyedObjects('ed25519', stacks, appYaml);
  const v = view(root);
  samples.push(screen(`ed25519 key, target state of ${STACKS} stacks (1 object each), first screen`, v, objects, false));
  samples.push(screen(`ed25519 key, the same ${STACKS} stacks screened again (a change elsewhere)`, v, objects, true));
  return samples;
}

async function main(): Promise<void> {
  log(`bench:signatures on ${machine()}`);
  const stacks = Array.from({ length: STACKS }, () => randomUUID());
  const cpuBefore = process.cpuUsage();
  const busyBefore = machineBusySeconds();
  const wallBefore = performance.now();
  const samples: Sample[] = ONLY === 'keyless' ? [await keylessSample(stacks)] : await everySample(stacks);
  const cpu = process.cpuUsage(cpuBefore);
  const mine = (cpu.user + cpu.system) / 1e6;
  const wall = (performance.now() - wallBefore) / 1000;
  const others = machineBusySeconds() - busyBefore - mine;
  log('');
  log('| check | runs | p50 ms | p95 ms | p99 ms | max ms | CPU ms per run (mean) |');
  log('|---|---|---|---|---|---|---|');
  for (const s of samples) report(s);
  log('');
  log(
    `over the run (${wall.toFixed(1)} s): this process ${mine.toFixed(1)} s of CPU, everything else on the machine ` +
      `${others.toFixed(1)} s (${((100 * others) / (wall * os.cpus().length)).toFixed(0)} % of its ${os.cpus().length} cores); ${machine()}`,
  );
}

/** The propagation rows of one mode: the p50 and p99 of their p50s and p99s (the worst change's), CPU per change (mean). */
function propagationSummary(rows: PropagationRow[], mode: 'off' | 'on'): string {
  const of = rows.filter((r) => r.mode === mode);
  const worst = (k: 'p50' | 'p99' | 'max' | 'postsMs') => Math.max(...of.map((r) => r[k])).toFixed(0);
  const mean = (k: 'api' | 'pg' | 'nats' | 'simCpu') => (of.reduce((n, r) => n + r[k], 0) / of.length).toFixed(2);
  const missed = of.reduce((n, r) => n + r.missed + r.refused, 0);
  return `| ${mode} | ${of.length} | ${worst('postsMs')} | ${worst('p50')} / **${worst('p99')}** / ${worst('max')} | ${mean('api')} + ${mean('pg')} + ${mean('nats')} | ${mean('simCpu')} | ${missed} |`;
}

async function propagation(): Promise<void> {
  if (!AGENTS) return;
  log('');
  log(`propagation with signatures off and on: ${AGENTS} WebSocket agents, ${CHANGES} changes of each, alternating`);
  const busyBefore = machineBusySeconds();
  const wallBefore = performance.now();
  const rows = await measurePropagation(AGENTS, CHANGES, log);
  const wall = (performance.now() - wallBefore) / 1000;
  log('');
  log(
    '| signatures | changes | POSTs answered (ms, worst) | every agent holds (off) / has checked (on): p50 / p99 / max (ms, worst change) | ' +
      'hub CPU per change, api + PostgreSQL + NATS (s, mean) | simulators CPU per change (s, mean) | not held, or refused |',
  );
  log('|---|---:|---:|---:|---:|---:|---:|');
  log(propagationSummary(rows, 'off'));
  log(propagationSummary(rows, 'on'));
  log(
    `machine busy over the propagation part: ${(machineBusySeconds() - busyBefore).toFixed(0)} CPU-s in ${wall.toFixed(0)} s ` +
      `(${os.cpus().length} cores; the hub's and the simulators' share is in the table); ${machine()}`,
  );
}

await main();
if (ONLY !== 'keyless') await propagation();

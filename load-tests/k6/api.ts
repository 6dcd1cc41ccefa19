/**
 * k6 scenario for `npm run bench:api` (load-tests/api.ts drives it; not meant to be run by hand,
 * though `k6 run` with the same environment works). An OPEN model: `constant-arrival-rate` starts
 * BENCH_RATE iterations per second whatever the responses do; when no VU is free the iteration
 * is counted in `dropped_iterations` instead of being delayed (no coordinated omission).
 *
 * Environment:
 *   BENCH_TARGET    target-state | deployment-objects | agent-events | heartbeat | health-status | work-orders
 *                   (work-orders: one iteration = create as admin, claim and complete as the targeted agent)
 *   BENCH_RATE      requests per second;  BENCH_SECONDS  duration
 *   BENCH_URLS      comma-separated api base URLs; iterations alternate between them (round-robin)
 *   BENCH_DATA      JSON file { agents: [{id, pak, object}], stacks: [id], generatorPak } (object: a deployment object the agent targets)
 *   BENCH_ADMIN_PAK the admin PAK (work-orders)
 *   BENCH_SUMMARY   where handleSummary writes the end-of-test summary (JSON)
 *
 * Typechecked by k6's own TypeScript support only (it strips types): the repository has no k6
 * typings, so this folder is outside tsconfig.check.json and eslint on purpose.
 */
import http from 'k6/http';
import exec from 'k6/execution';
import { SharedArray } from 'k6/data';

interface Agent {
  id: string;
  pak: string;
  object: string;
}

const target = __ENV.BENCH_TARGET || 'target-state';
const rate = Number(__ENV.BENCH_RATE || 1000);
const seconds = Number(__ENV.BENCH_SECONDS || 60);
const urls: string[] = (__ENV.BENCH_URLS || 'http://127.0.0.1:3000').split(',');
const adminPak = __ENV.BENCH_ADMIN_PAK || '';
const JSON_HEADERS = { 'Content-Type': 'application/json' };

// SharedArray hands out a fresh JSON.parse of the element on every access: keep elements small.
const generatorPak = new SharedArray<string>('generator', () => [JSON.parse(open(__ENV.BENCH_DATA)).generatorPak]);
const agents = new SharedArray<Agent>('agents', () => JSON.parse(open(__ENV.BENCH_DATA)).agents);
const stacks = new SharedArray<string>('stacks', () => JSON.parse(open(__ENV.BENCH_DATA)).stacks);

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'p(95)', 'p(99)', 'max'],
  scenarios: {
    load: {
      executor: 'constant-arrival-rate',
      rate,
      timeUnit: '1s',
      duration: `${seconds}s`,
      // Little's law: rate × latency VUs are busy. Enough for ~50 ms answers up front; up to 250 ms
      // of average latency before iterations are dropped (an overloaded api shows as drops + p99).
      // VUs set up mid-test cost CPU on the machine under test, so allocate generously up front.
      preAllocatedVUs: Math.max(50, Math.ceil(rate / 10)),
      maxVUs: Math.max(200, Math.ceil(rate / 4)),
      gracefulStop: '5s',
    },
  },
};

function pick<T>(list: ArrayLike<T>): T {
  return list[Math.floor(Math.random() * list.length)];
}

function auth(pak: string, json = true): Record<string, string> {
  return json ? { Authorization: `Bearer ${pak}`, ...JSON_HEADERS } : { Authorization: `Bearer ${pak}` };
}

function postDeploymentObject(base: string): void {
  const stack = pick(stacks);
  const n = exec.scenario.iterationInTest;
  const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench-post\n  namespace: bench\ndata:\n  n: "${n}"\n`;
  http.post(`${base}/api/v1/stacks/${stack}/deployment-objects`, JSON.stringify({ yaml_content: yaml }), {
    headers: auth(generatorPak[0]),
    tags: { name: 'deployment-objects' },
    timeout: '10s',
  });
}

/** What Brokkr's agent sends after applying an object. */
function postAgentEvent(base: string): void {
  const agent = pick(agents);
  const body = { agent_id: agent.id, deployment_object_id: agent.object, event_type: 'DEPLOY', status: 'SUCCESS', message: 'applied' };
  http.post(`${base}/api/v1/agents/${agent.id}/events`, JSON.stringify(body), {
    headers: auth(agent.pak),
    tags: { name: 'agent-events' },
    timeout: '10s',
  });
}

function postHeartbeat(base: string): void {
  const agent = pick(agents);
  http.post(`${base}/api/v1/agents/${agent.id}/heartbeat`, null, {
    headers: auth(agent.pak, false),
    tags: { name: 'heartbeat' },
    timeout: '10s',
  });
}

function patchHealth(base: string): void {
  const agent = pick(agents);
  const body = {
    deployment_objects: [
      {
        id: agent.object,
        status: 'healthy',
        summary: { pods_ready: 1, pods_total: 1, conditions: [], resources: [] },
        checked_at: new Date().toISOString(),
      },
    ],
  };
  http.patch(`${base}/api/v1/agents/${agent.id}/health-status`, JSON.stringify(body), {
    headers: auth(agent.pak),
    tags: { name: 'health-status' },
    timeout: '10s',
  });
}

/** A generator's order for one agent, claimed and completed by that agent: three requests. */
function workOrder(base: string): void {
  const agent = pick(agents);
  const body = {
    work_type: 'custom',
    yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench-wo\n',
    targeting: { agent_ids: [agent.id] },
  };
  const created = http.post(`${base}/api/v1/work-orders`, JSON.stringify(body), {
    headers: auth(adminPak),
    tags: { name: 'work-orders create' },
    timeout: '10s',
    responseType: 'text',
  });
  if (created.status !== 201) return;
  const id = (JSON.parse(created.body as string) as { id: string }).id;
  const claimed = http.post(`${base}/api/v1/work-orders/${id}/claim`, JSON.stringify({ agent_id: agent.id }), {
    headers: auth(agent.pak),
    tags: { name: 'work-orders claim' },
    timeout: '10s',
  });
  if (claimed.status !== 200) return;
  http.post(`${base}/api/v1/work-orders/${id}/complete`, JSON.stringify({ success: true, message: 'done' }), {
    headers: auth(agent.pak),
    tags: { name: 'work-orders complete' },
    timeout: '10s',
  });
}

const WRITES: Record<string, (base: string) => void> = {
  'deployment-objects': postDeploymentObject,
  'agent-events': postAgentEvent,
  heartbeat: postHeartbeat,
  'health-status': patchHealth,
  'work-orders': workOrder,
};

export default function (): void {
  const base = urls[exec.scenario.iterationInTest % urls.length];
  if (target === 'target-state') {
    const agent = pick(agents);
    http.get(`${base}/api/v1/agents/${agent.id}/target-state`, {
      headers: { Authorization: `Bearer ${agent.pak}` },
      tags: { name: 'target-state' },
      timeout: '10s',
    });
    return;
  }
  WRITES[target](base);
}

// Markers on k6's log: the driver samples CPU counters between them, i.e. over the load window
// only (VU set-up before it and the summary after it are left out).
export function setup(): void {
  console.log('BENCH_LOAD_START');
}

export function teardown(): void {
  console.log('BENCH_LOAD_END');
}

export function handleSummary(summary: unknown): Record<string, string> {
  return { [__ENV.BENCH_SUMMARY]: JSON.stringify(summary) };
}

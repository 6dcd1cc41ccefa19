import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { eventually, freePort } from '@brokkr/testkit';
import { BEGIN_MARKER, END_MARKER } from '../scripts/lib/first-deployment.ts';
import { annotateAgent, brokkr, chartConfigMapData, kubeClients, valuesFile, type LocalHub } from './support/local-renders.ts';
import { runStart, type StartProcess } from './support/start-process.ts';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Step 3's output once the agent has applied and reported: event, a healthy report, the Deployment Available. */
function reported(seen: string): boolean {
  const health = seen.split('\n')[1] ?? '';
  return /"status":"SUCCESS"/.test(seen) && /"status":"healthy"/.test(health) && /Available=True, 2\/2 pods ready/.test(seen);
}

/** Steps 1–2, step 3, and the `export` lines step 3 needs when run on its own. */
function splitSteps(block: string): { steps12: string; step3: string; exports: string } {
  const [steps12 = '', step3 = ''] = block.split(/\n(?=# 3\. )/);
  expect(step3, 'the block has a step 3').to.match(/^# 3\. /);
  return {
    steps12,
    step3,
    exports: steps12
      .split('\n')
      .filter((l) => l.startsWith('export '))
      .join('\n'),
  };
}

/** Runs shell text exactly as pasted into bash; returns what it printed. */
function paste(script: string): string {
  return execFileSync('bash', ['-euo', 'pipefail', '-c', script], { encoding: 'utf8', timeout: 30_000 });
}

/**
 * Independently of the printed commands: the objects are in the local cluster, owned by the stack,
 * and the Deployment's pods were made by its controllers and are Ready on the simulated nodes.
 */
async function expectInTheCluster(kubeconfigPath: string, stack: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const cm = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'hello-brokkr', namespace: 'default' });
  expect(cm.data).to.deep.equal({ greeting: 'hello from brokkr' });
  expect(cm.metadata?.labels?.['k8s.brokkr.io/stack']).to.equal(stack);
  const deployment = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'hello-brokkr', namespace: 'default' });
  expect(deployment.metadata?.labels?.['k8s.brokkr.io/stack']).to.equal(stack);
  expect(deployment.status?.readyReplicas).to.equal(2);
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default', labelSelector: 'app=hello-brokkr' });
  expect(pods.items.map((p) => p.spec?.nodeName).every((n) => n?.startsWith('kwok-node-'))).to.equal(true);
}

const alive = (pid: number | undefined): boolean => {
  try {
    return pid !== undefined && process.kill(pid, 0);
  } catch {
    return false;
  }
};

/** What the walkthrough of docs/renders.md reads from npm start's output and the first deployment block. */
function localHub(output: string, block: string, kubeconfigPath: string): LocalHub {
  const read = (re: RegExp, what: string) => {
    const value = re.exec(block)?.[1] ?? re.exec(output)?.[1];
    expect(value, what).to.be.a('string');
    return value!;
  };
  return {
    apiUrl: read(/^export BROKKR_URL=(\S+)/m, 'BROKKR_URL'),
    adminPak: read(/^export ADMIN_PAK=(\S+)/m, 'ADMIN_PAK'),
    agentId: read(/\/agents\/([0-9a-f-]{36})\/targets/, 'the local agent'),
    chartRepository: read(
      /chart repository: (http:\/\/127\.0\.0\.1:\d+\/charts) \(examples\/charts: [^)]*hello 0\.1\.0/,
      'chart repository',
    ),
    kubeconfigPath,
  };
}

/**
 * The README's first deployment, end to end: `npm start` brings up the hub, then a local cluster
 * where pods run (controllers, scheduler, KWOK) with an agent, and prints three steps. We paste
 * exactly those steps, see the agent's SUCCESS event and a healthy report through the api, find
 * the ConfigMap and the Available Deployment in the local cluster. The same hub then renders a chart
 * from the chart repository npm start serves and a kustomize overlay for the local agent
 * (docs/renders.md), and Ctrl-C leaves no process and no directory behind.
 */
describe('npm start: first deployment on the local cluster', () => {
  let start: StartProcess | undefined;
  let hub: LocalHub | undefined;
  let interrupted = false;
  const started = (): LocalHub => {
    if (!hub) throw new Error('npm start did not get as far as the first deployment (see the first test)');
    return hub;
  };

  after(async () => {
    if (start && !interrupted) await start.interrupt();
  });

  it('the printed steps, pasted as they are, put the object into the local API server', async function () {
    this.timeout(600_000); // includes building kube-apiserver on a machine that has never done so
    const port = await freePort();
    start = runStart([], { BROKKR__BROKER__PORT: String(port) });
    await start.waitFor(/ready in [\d.]+ s/, 60_000);
    // The api is usable before the cluster exists: the cluster comes up afterwards.
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);

    const block = (await start.waitFor(new RegExp(`${escape(BEGIN_MARKER)}\\n([\\s\\S]*?)\\n${escape(END_MARKER)}`), 540_000))[1] ?? '';
    const kubeconfigPath = /kubeconfig: (\S+)/.exec(start.output())?.[1] ?? '';
    const { steps12, step3, exports } = splitSteps(block);

    // Steps 1 and 2, verbatim; we only read back the stack id the paste put into $STACK.
    const stack = paste(`${steps12}\necho "STACK=$STACK"`).match(/STACK=(\S+)/)?.[1] ?? '';
    expect(stack).to.match(/^[0-9a-f-]{36}$/);

    // Step 3, verbatim, as a person would re-run it until the agent has reported.
    let seen = '';
    for (let i = 0; i < 120 && !reported(seen); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      seen = paste(`${exports}\nSTACK=${stack}\n${step3}`);
    }
    expect(seen).to.match(/"event_type":"APPLIED","status":"SUCCESS"/);
    const health = JSON.parse(seen.split('\n')[1] ?? '{}') as { stack_id: string; deployment_objects: { status: string }[] };
    expect(health.stack_id).to.equal(stack);
    expect(health.deployment_objects.map((d) => d.status)).to.deep.equal(['healthy']);
    expect(seen).to.include('Available=True, 2/2 pods ready');

    await expectInTheCluster(kubeconfigPath, stack);
    hub = localHub(start.output(), block, kubeconfigPath);
  });

  it("a chart from npm start's chart repository reaches the local cluster with a value from the agent's annotation and the cluster's version", async function () {
    this.timeout(240_000);
    const local = started();
    await annotateAgent(local, 'region', 'local-1');
    // Strict: no default, so the value can only come from the annotation.
    let stack: string | undefined;
    const values = await valuesFile("greeting: 'hello from {{ agent.annotations.region }}'\nreplicaCount: 2\n");
    try {
      const out = await brokkr(local, [
        ...['apply', '--chart', 'hello', '--repo', local.chartRepository, '--chart-version', '0.1.0', '--values', values.file],
        ...['--stack', 'hello-chart', '--generator', 'local-dev', '--target', 'local', '--wait', '--timeout', '150s'],
      ]);
      expect(out).to.include('from chart hello 0.1.0').and.include('applied by every agent');
      stack = /stack "hello-chart" created \(([0-9a-f-]{36})\)/.exec(out)?.[1];
    } finally {
      await values.remove();
    }
    const data = await chartConfigMapData(local.kubeconfigPath, 'hello-chart');
    expect(data.greeting).to.equal('hello from local-1');
    const deployment = await kubeClients(local.kubeconfigPath).apps.readNamespacedDeployment({
      name: 'hello-chart-hello',
      namespace: 'default',
    });
    expect(deployment.spec?.replicas).to.equal(2);
    expect(stack, 'the stack apply created').to.be.a('string');
    expect(deployment.metadata?.labels?.['k8s.brokkr.io/stack']).to.equal(stack);
  });

  it('a kustomize overlay sent with brokkr apply -k reaches the local cluster as the overlay builds it', async function () {
    this.timeout(240_000);
    const local = started();
    const out = await brokkr(local, [
      ...['apply', '-k', 'examples/kustomize/hello/overlays/local'],
      ...['--generator', 'local-dev', '--target', 'local', '--wait', '--timeout', '150s'],
    ]);
    expect(out)
      .to.include('stack "hello-local"')
      .and.include('from kustomize overlay overlays/local')
      .and.include('applied by every agent');
    const kube = kubeClients(local.kubeconfigPath);
    // The overlay's name prefix and its patch of the base's replicas.
    const deployment = await kube.apps.readNamespacedDeployment({ name: 'local-hello', namespace: 'default' });
    expect(deployment.spec?.replicas).to.equal(2);
    // Its ConfigMap generator merged over the base's, the hashed name referenced from the Deployment.
    const configMap = deployment.spec?.template.spec?.containers[0]?.envFrom?.[0]?.configMapRef?.name ?? '';
    expect(configMap).to.match(/^local-hello-[a-z0-9]+$/);
    const cm = await kube.core.readNamespacedConfigMap({ name: configMap, namespace: 'default' });
    expect(cm.data).to.deep.equal({ greeting: 'hello from the local overlay' });
  });

  it('docs/dependencies.md: stack dep-app, waiting for dep-db to be healthy, stays out of the local target state while dep-db never becomes Ready, and arrives once it is', async function () {
    this.timeout(240_000);
    const local = started();
    const apply = (dir: string, ...more: string[]) =>
      brokkr(local, ['apply', '-f', `examples/dependencies/${dir}`, '--generator', 'local-dev', '--target', 'local', ...more]);
    await apply('db', '--stack', 'dep-db');
    expect(await apply('app', '--stack', 'dep-app', '--depends-on', 'dep-db')).to.include('waits for stack "dep-db" to be healthy');
    const stackIds = JSON.parse(await brokkr(local, ['get', 'stacks', '-o', 'json'])) as { id: string; name: string }[];
    const app = stackIds.find((s) => s.name === 'dep-app')!.id;

    const kube = kubeClients(local.kubeconfigPath);
    // dep-db applied, its pod scheduled and reported NotReady: only then is "waiting" the answer to check.
    await eventually(async () => (await brokkr(local, ['deps', 'status', 'dep-app', 'local'])).includes('"dep-db" is not healthy'), {
      timeoutMs: 120_000,
      what: 'dep-app shown waiting on dep-db',
    });
    const served = await fetch(`${local.apiUrl}/agents/${local.agentId}/target-state?mode=full`, {
      headers: { authorization: `Bearer ${local.adminPak}` },
    });
    expect(((await served.json()) as { stack_id: string }[]).map((o) => o.stack_id)).not.to.include(app);
    const missing = await kube.core.readNamespacedConfigMap({ name: 'dep-app', namespace: 'default' }).catch(() => undefined);
    expect(missing, 'dep-app is not in the cluster').to.equal(undefined);

    await apply('db-ready', '--stack', 'dep-db');
    await eventually(async () => kube.core.readNamespacedConfigMap({ name: 'dep-app', namespace: 'default' }).catch(() => undefined), {
      timeoutMs: 120_000,
      what: 'dep-app in the local cluster once dep-db is healthy',
    });
    expect(await brokkr(local, ['deps', 'status', 'dep-app', 'local'])).to.include('is served to agent "local"');
  });

  it('docs/maintenance-windows.md: during a freeze on env=prod the local agent holds a new stack, says why, changes nothing, and applies it once the freeze ends', async function () {
    this.timeout(240_000);
    const local = started();
    const labelled = await fetch(`${local.apiUrl}/agents/${local.agentId}/labels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${local.adminPak}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: local.agentId, label: 'env=prod' }),
    });
    expect(labelled.status, await labelled.clone().text()).to.equal(201);
    const windowArgs = [
      '--type',
      'deny',
      '--agent-label',
      'env=prod',
      '--rrule',
      'DTSTART:20260101T000000Z\\nRRULE:FREQ=HOURLY',
      '--duration',
      'PT2H',
    ];
    expect(await brokkr(local, ['windows', 'create', 'freeze', ...windowArgs])).to.include('maintenance window "freeze" created');
    await brokkr(local, ['apply', '-f', 'examples/windows/frozen', '--stack', 'frozen', '--generator', 'local-dev', '--target', 'local']);
    expect(await brokkr(local, ['deps', 'status', 'frozen', 'local'])).to.include('maintenance window "freeze" (deny)');

    const events = async () => {
      const res = await fetch(`${local.apiUrl}/agents/${local.agentId}/events`, { headers: { authorization: `Bearer ${local.adminPak}` } });
      return (await res.json()) as { event_type: string; status: string; message: string | null }[];
    };
    const blocked = await eventually(async () => (await events()).find((e) => e.event_type === 'window_blocked'), {
      timeoutMs: 120_000,
      what: 'the local agent reporting window_blocked',
    });
    expect(blocked.status).to.equal('BLOCKED');
    expect(blocked.message).to.include('freeze');
    const kube = kubeClients(local.kubeconfigPath);
    const frozen = () => kube.core.readNamespacedConfigMap({ name: 'frozen', namespace: 'default' }).catch(() => undefined);
    expect(await frozen(), 'nothing applied during the freeze').to.equal(undefined);

    await brokkr(local, ['windows', 'delete', 'freeze']);
    await eventually(frozen, { timeoutMs: 120_000, what: 'the frozen stack applied once the freeze ended' });
  });

  it('Ctrl-C stops everything and leaves no process and no directory behind', async function () {
    this.timeout(120_000);
    started();
    const pid = start!.child.pid;
    interrupted = true;
    const { code, leaked, processes } = await start!.interrupt();
    expect(code).to.equal(0);
    // Its own process by id: other npm starts may run on the same machine meanwhile.
    expect(alive(pid), 'scripts/start.ts').to.equal(false);
    expect(processes).to.not.match(new RegExp(`guard\\.sh ${pid} `));
    expect(processes).to.not.include(hub!.kubeconfigPath);
    expect(leaked, 'temporary directories left behind').to.deep.equal([]);
  });
});

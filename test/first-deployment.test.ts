import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { freePort } from '@brokkr/testkit';
import { BEGIN_MARKER, END_MARKER } from '../scripts/lib/first-deployment.ts';
import { runStart } from './support/start-process.ts';

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

/**
 * The README's first deployment, end to end: `npm start` brings up the hub, then a local cluster
 * where pods run (controllers, scheduler, KWOK) with an agent, and prints three steps. We paste
 * exactly those steps, see the agent's SUCCESS event and a healthy report through the api, find
 * the ConfigMap and the Available Deployment in the local cluster, and Ctrl-C leaves no process and
 * no directory behind.
 */
describe('npm start: first deployment on the local cluster', () => {
  it('the printed steps, pasted as they are, put the object into the local API server', async function () {
    this.timeout(600_000); // includes building kube-apiserver on a machine that has never done so
    const port = await freePort();
    const start = runStart([], { BROKKR__BROKER__PORT: String(port) });
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

    const pid = start.child.pid;
    const { code, leaked, processes } = await start.interrupt();
    expect(code).to.equal(0);
    expect(processes).to.not.include('scripts/start.ts');
    expect(processes).to.not.match(new RegExp(`guard\\.sh ${pid} `));
    expect(processes).to.not.include(kubeconfigPath);
    expect(leaked, 'temporary directories left behind').to.deep.equal([]);
  });
});

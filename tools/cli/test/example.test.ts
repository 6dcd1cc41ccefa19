import { expect } from 'chai';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { repoRoot } from '@brokkr/infra';
import { eventually, freePort } from '@brokkr/testkit';
import { runStart } from '../../../test/support/start-process.ts';
import { buildCli, runCli } from './support.ts';

/**
 * The README's CLI flow, end to end and for real: `npm start` (hub, local cluster where pods run,
 * our agent), then `brokkr apply -f examples/hello-nginx --wait` with the admin PAK it printed. The
 * agent applies the objects, the CLI exits 0 once it reported them, the Deployment becomes
 * Available and the stack's health `healthy`.
 */
describe('brokkr apply -f examples/hello-nginx --wait against npm start', () => {
  it('deploys the example to the local cluster, and a second apply changes nothing', async function () {
    this.timeout(600_000); // includes building kube-apiserver on a machine that has never done so
    await buildCli();
    const port = await freePort();
    // runStart spawns scripts/start.ts relative to the working directory, as `npm start` does.
    const cwd = process.cwd();
    process.chdir(repoRoot);
    const start = runStart([], { BROKKR__BROKER__PORT: String(port) });
    process.chdir(cwd);
    let passed = false;
    try {
      const adminPak = (await start.waitFor(/admin PAK: (brokkr_\S+)/, 60_000))[1]!;
      await start.waitFor(/local cluster ready/, 540_000);
      const kubeconfigPath = (await start.waitFor(/kubeconfig: (\S+)/, 10_000))[1]!;
      // The URL exactly as npm start prints it (…/api/v1).
      const env = { BROKKR_URL: `http://127.0.0.1:${port}/api/v1`, BROKKR_PAK: adminPak };

      const applied = await runCli(['apply', '-f', 'examples/hello-nginx', '--wait', '--timeout', '3m'], { env });
      expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
      expect(applied.stdout).to.include('stack "hello-nginx" created');
      expect(applied.stdout).to.include('targeted at agent local (cluster local)');
      expect(applied.stdout).to.match(/local \(cluster local\): applied/);
      expect(applied.stdout).to.include('applied by every agent');
      const stackId = /stack "hello-nginx" created \(([0-9a-f-]{36})\)/.exec(applied.stdout)![1]!;

      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      const deployment = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'hello-nginx', namespace: 'hello-nginx' });
      expect(deployment.metadata?.labels?.['k8s.brokkr.io/stack']).to.equal(stackId);
      // The local cluster runs controllers and simulated nodes: the Deployment becomes Available and
      // the agent reports the stack healthy from its Ready pod.
      const available = async () =>
        (
          await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'hello-nginx', namespace: 'hello-nginx' })
        ).status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
      await eventually(available, { timeoutMs: 60_000, what: 'hello-nginx Available' });
      const health = async () => {
        const res = await fetch(`${env.BROKKR_URL}/stacks/${stackId}/health`, { headers: { authorization: `Bearer ${adminPak}` } });
        const body = (await res.json()) as { deployment_objects: { status: string }[] };
        return body.deployment_objects.length > 0 && body.deployment_objects.every((d) => d.status === 'healthy');
      };
      await eventually(health, { timeoutMs: 90_000, what: 'the stack healthy' });
      const page = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'hello-nginx-page', namespace: 'hello-nginx' });
      expect(page.data?.['index.html']).to.include('hello from brokkr');

      const again = await runCli(['apply', '-f', 'examples/hello-nginx', '--wait'], { env });
      expect(again.code, again.stdout + again.stderr).to.equal(0);
      expect(again.stdout).to.include('unchanged');
      passed = true;
    } finally {
      const { code } = await start.interrupt();
      // Only once the steps passed: an earlier failure is the one to report.
      if (passed) expect(code, 'npm start exit code after Ctrl-C').to.equal(0);
    }
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { repoRoot } from '@brokkr/infra';
import { eventually, startKubeApiServer, useTestInfra, type KubeApiServer } from '@brokkr/testkit';
import { parseManifests } from '../src/index.ts';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import {
  agentEvents,
  createStack,
  deploy,
  registerAgent,
  startBroker,
  target,
  type Broker,
  type DeploymentObject,
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap, stream } from './support/manifests.ts';

/**
 * The single-namespace install for real: the agent runs with the service account of
 * k8s/agent/namespaced (a token from the TokenRequest API), so every request it makes is checked
 * against exactly the RBAC those manifests grant.
 */
describe('agent with WATCH_NAMESPACE under the namespaced RBAC (end to end)', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess | undefined;

  const cm = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
  const eventFor = (d: DeploymentObject, status: string, type?: string) =>
    eventually(
      async () =>
        (await agentEvents(broker.admin, agent.id)).find(
          (e) => e.deployment_object_id === d.id && e.status === status && (!type || e.event_type === type),
        ),
      { timeoutMs: 60_000, what: `${status} event for ${d.id}` },
    );

  async function applyManifest(file: string): Promise<void> {
    for (const object of parseManifests(readFileSync(path.join(repoRoot, 'k8s/agent', file), 'utf8'))) {
      const res = await kubectl.call(
        'PATCH',
        selfLink(object.apiVersion, object.kind, object.metadata),
        object,
        'application/apply-patch+yaml',
      );
      expect(res.status, JSON.stringify(res.body)).to.be.lessThan(300);
    }
  }

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
    for (const file of [
      '00-namespace.yaml',
      '10-serviceaccount.yaml',
      'namespaced/00-watched-namespace.yaml',
      'namespaced/30-rbac-namespace.yaml',
    ]) {
      await applyManifest(file);
    }
    const token = await kubectl.create('/api/v1/namespaces/brokkr-agent/serviceaccounts/brokkr-agent/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    });
    const kubeconfig = await kube.kubeconfigWithToken('brokkr-agent-sa', token.status.token);
    agent = await registerAgent(broker.admin);
    proc = await spawnAgent(broker.url, agent, kubeconfig, { env: { BROKKR__AGENT__WATCH_NAMESPACE: 'brokkr-apps' } });
  });

  after(async () => {
    await proc?.stop();
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-5000));
  });

  it('applies into the watched namespace (also objects that name none) and prunes there', async () => {
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const plain = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: "1"\n`;
    const d1 = await deploy(broker.admin, stack, stream(plain, configMap('brokkr-apps', 'explicit', { b: '2' })));
    await eventFor(d1, 'SUCCESS');
    expect(await kubectl.get(cm('brokkr-apps', 'plain'))).to.have.nested.property('data.a', '1');
    expect(await kubectl.get(cm('default', 'plain'))).to.equal(undefined);
    const d2 = await deploy(broker.admin, stack, plain);
    await eventFor(d2, 'SUCCESS');
    await eventually(async () => !(await kubectl.get(cm('brokkr-apps', 'explicit'))), { timeoutMs: 60_000, what: 'explicit pruned' });
    expect((await broker.admin.delete(`/agents/${agent.id}/targets/${stack}`)).status).to.equal(204);
    await eventually(async () => !(await kubectl.get(cm('brokkr-apps', 'plain'))), {
      timeoutMs: 60_000,
      what: 'plain deleted with the stack',
    });
  });

  it('fails an object outside the watched namespace with a clear message, applying nothing', async () => {
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const d = await deploy(
      broker.admin,
      stack,
      stream(configMap('brokkr-apps', 'inside', { a: '1' }), configMap('default', 'outside', { a: '1' })),
    );
    const failure = await eventFor(d, 'FAILURE');
    expect(failure.message).to.include(
      "ConfigMap 'default/outside' is in namespace default, but this agent only manages namespace brokkr-apps",
    );
    expect(await kubectl.get(cm('brokkr-apps', 'inside'))).to.equal(undefined);
  });
});

function selfLink(apiVersion: string, kind: string, meta: { name: string; namespace?: string }): string {
  const plural: Record<string, string> = {
    Namespace: 'namespaces',
    ServiceAccount: 'serviceaccounts',
    Role: 'roles',
    RoleBinding: 'rolebindings',
  };
  const base = apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`;
  const ns = meta.namespace ? `/namespaces/${meta.namespace}` : '';
  return `${base}${ns}/${plural[kind]}/${meta.name}?fieldManager=test`;
}

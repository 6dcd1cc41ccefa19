import { expect } from 'chai';
import { eventually, startKubeApiServer, useTestInfra, type AnyJson, type KubeApiServer } from '@brokkr/testkit';
import { runAgentToExit, spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { createStack, deploy, mintPak, registerAgent, startBroker, target, type Broker } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap } from './support/manifests.ts';

/** Start-up checks, the INACTIVE gate, the agent's own HTTP endpoints and a clean SIGTERM. */
describe('agent lifecycle (end to end)', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
  });

  after(async () => {
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  describe('start-up failures (exit code 1 and a clear message)', () => {
    it('a PAK the broker rejects', async () => {
      const agent = await registerAgent(broker.admin);
      const { code, output } = await runAgentToExit(broker.url, { ...agent, pak: mintPak().pak }, kube.kubeconfigPath);
      expect(code).to.equal(1);
      expect(output).to.include('Invalid agent PAK');
    });

    it('an agent name the broker does not know', async () => {
      const agent = await registerAgent(broker.admin);
      const { code, output } = await runAgentToExit(broker.url, { ...agent, name: 'nobody' }, kube.kubeconfigPath);
      expect(code).to.equal(1);
      expect(output).to.include("Agent not found: no agent named 'nobody'");
    });

    it("another agent's PAK", async () => {
      const [a, b] = [await registerAgent(broker.admin), await registerAgent(broker.admin)];
      const { code, output } = await runAgentToExit(broker.url, { ...a, pak: b.pak }, kube.kubeconfigPath);
      expect(code).to.equal(1);
      expect(output).to.match(/does not belong to agent|is not agent/);
    });

    it('a broker that never becomes ready', async () => {
      const agent = await registerAgent(broker.admin);
      const { code, output } = await runAgentToExit('http://127.0.0.1:9', agent, kube.kubeconfigPath, { BROKKR__AGENT__MAX_RETRIES: '2' });
      expect(code).to.equal(1);
      expect(output).to.include('did not become ready after 2 attempts');
    });

    it('a missing kubeconfig, and a missing PAK', async () => {
      const agent = await registerAgent(broker.admin);
      const missing = await runAgentToExit(broker.url, agent, '/nonexistent/kubeconfig');
      expect(missing.code).to.equal(1);
      expect(missing.output).to.include('kubeconfig /nonexistent/kubeconfig does not exist');
      const noPak = await runAgentToExit(broker.url, { ...agent, pak: '' }, kube.kubeconfigPath);
      expect(noPak.code).to.equal(1);
      expect(noPak.output).to.include('BROKKR__AGENT__PAK');
    });
  });

  describe('running', () => {
    let proc: RunningAgentProcess;
    let agentId: string;
    let stack: string;

    before(async () => {
      const agent = await registerAgent(broker.admin, { active: false });
      agentId = agent.id;
      stack = await createStack(broker.admin);
      await target(broker.admin, agent.id, stack);
      await deploy(broker.admin, stack, configMap('default', 'gated', { v: '1' }));
      proc = await spawnAgent(broker.url, agent, kube.kubeconfigPath, { env: { BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '2' } });
    });

    after(async () => {
      await proc?.stop();
    });

    afterEach(function () {
      if (this.currentTest?.state === 'failed') console.log(proc.output().slice(-5000));
    });

    const metrics = async () => (await fetch(`${proc.healthUrl}/metrics`)).text();

    it('only heartbeats while INACTIVE (with the Kubernetes reachability it measured)', async () => {
      const record = await eventually(
        async () => {
          const res = await broker.admin.get(`/agents/${agentId}`);
          return res.body.last_heartbeat && res.body.k8s_reported_at ? res.body : undefined;
        },
        { timeoutMs: 60_000, what: 'a heartbeat' },
      );
      expect(record.k8s_reachable).to.equal(true);
      expect(record.k8s_api_latency_ms).to.be.a('number');
      await eventually(async () => /brokkr_agent_heartbeat_sent_total\{status="success",service="agent"\} [2-9]/.test(await metrics()), {
        timeoutMs: 60_000,
        what: 'two heartbeats',
      });
      expect(await metrics()).to.not.match(/brokkr_agent_poll_requests_total\{status="/);
      expect(await kubectl.get('/api/v1/namespaces/default/configmaps/gated')).to.equal(undefined);
    });

    it('starts reconciling once an admin activates it, and long-polls the target state', async () => {
      expect((await broker.admin.put(`/agents/${agentId}`, { status: 'ACTIVE' })).status).to.equal(200);
      await eventually(() => kubectl.get('/api/v1/namespaces/default/configmaps/gated'), { timeoutMs: 30_000, what: 'gated applied' });
      await eventually(
        async () => /brokkr_agent_poll_requests_total\{status="not_modified",service="agent"\} [1-9]/.test(await metrics()),
        {
          timeoutMs: 30_000,
          what: 'a long-poll answered 304',
        },
      );
    });

    it('serves /healthz, /readyz, /health and /metrics', async () => {
      const healthz = await fetch(`${proc.healthUrl}/healthz`);
      expect([healthz.status, await healthz.text()]).to.deep.equal([200, 'OK']);
      const readyz = await fetch(`${proc.healthUrl}/readyz`);
      expect([readyz.status, await readyz.text()]).to.deep.equal([200, 'Ready']);
      const health = (await (await fetch(`${proc.healthUrl}/health`)).json()) as AnyJson;
      expect(health).to.include({ status: 'healthy', agent_status: 'ACTIVE' });
      expect(health.kubernetes).to.deep.equal({ connected: true });
      expect(health.broker.connected).to.equal(true);
      const text = await metrics();
      for (const name of [
        'poll_duration_seconds',
        'applies_total',
        'apply_failures_total',
        'prune_deletions_total',
        'reconcile_duration_seconds',
        'heartbeat_sent_total',
      ]) {
        expect(text).to.include(`brokkr_agent_${name}`);
      }
      expect(text).to.match(/brokkr_agent_applies_total\{kind="ConfigMap",service="agent"\} 1/);
    });

    it('leaves the cluster alone when it is deactivated (an inactive agent gets an empty target state)', async () => {
      expect((await broker.admin.put(`/agents/${agentId}`, { status: 'INACTIVE' })).status).to.equal(200);
      // Long enough for several heartbeats and a long-poll round.
      await eventually(
        async () => /brokkr_agent_heartbeat_sent_total\{status="success",service="agent"\} ([89]|\d\d)/.test(await metrics()),
        { timeoutMs: 30_000, what: 'more heartbeats' },
      );
      expect(await kubectl.get('/api/v1/namespaces/default/configmaps/gated')).to.not.equal(undefined);
    });

    it('stops cleanly on SIGTERM (exit code 0)', async () => {
      expect(await proc.stop('SIGTERM')).to.equal(0);
    });
  });
});

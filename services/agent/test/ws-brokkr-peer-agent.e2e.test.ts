import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { eventually, freePort, startKubeApiServer, useTestInfra, type KubeApiServer } from '@brokkr/testkit';
import {
  agentEvents,
  createStack,
  deploy,
  registerAgent,
  startBroker,
  target,
  type Broker,
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { RecordingProxy } from './support/recording-proxy.ts';

/** Brokkr 0.9.1's own agent binary (`bash ../shared/peer/unpack.sh`); optional: users' machines do not have it. */
const PEER_AGENT = process.env.BROKKR_PEER_AGENT ?? join(homedir(), '.cache/brokkr/peer/brokkr-0.9.1/brokkr-agent');

/**
 * Brokkr's own Rust agent against our hub, over the WebSocket channel, with a real kube-apiserver:
 * it must keep what it deployed (against Brokkr's broker it deletes it one poll later, because its
 * gap detection reads the incremental target state as "stack removed"; docs/compatibility.md).
 */
/** Headers as recorded, without the PAK (test output is kept in CI logs). */
function redacted(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return headers && { ...headers, ...(headers.authorization ? { authorization: 'Bearer <redacted>' } : {}) };
}

describe('ws: Brokkr 0.9.1 agent keeps its deployment (peer binary, optional)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let proxy: RecordingProxy;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  let agent: RegisteredAgent;
  let child: ChildProcess | undefined;
  let output = '';

  before(async function () {
    if (!existsSync(PEER_AGENT)) {
      console.log(
        `      skipped: Brokkr's agent binary not found at ${PEER_AGENT} (run bash ../shared/peer/unpack.sh, or set BROKKR_PEER_AGENT)`,
      );
      this.skip();
    }
    [broker, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
    proxy = await RecordingProxy.start(broker.url);
    agent = await registerAgent(broker.admin);
    child = spawn(PEER_AGENT, ['start'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: homedir(),
        BROKKR__AGENT__BROKER_URL: proxy.url,
        BROKKR__AGENT__PAK: agent.pak,
        BROKKR__AGENT__AGENT_NAME: agent.name,
        BROKKR__AGENT__CLUSTER_NAME: agent.clusterName,
        BROKKR__AGENT__KUBECONFIG_PATH: kube.kubeconfigPath,
        BROKKR__AGENT__POLLING_INTERVAL: '2',
        BROKKR__AGENT__HEALTH_PORT: String(await freePort()),
        BROKKR__LOG__LEVEL: 'info',
        RUST_LOG: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  });

  after(async function () {
    child?.kill('SIGINT');
    if (child && child.exitCode === null) await new Promise((r) => child!.once('exit', r));
    if (this.currentTest?.state === 'failed') console.log(output.slice(-8000));
    await proxy?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  it('connects over the WebSocket, applies a ConfigMap and it is still there several polls later', async () => {
    await eventually(
      async () =>
        (await broker.admin.get<{ connections: { agent_id: string }[] }>('/admin/ws/connections')).body.connections.some(
          (c) => c.agent_id === agent.id,
        ),
      {
        timeoutMs: 60_000,
        what: "Brokkr's agent on /internal/ws/agent",
      },
    );
    const stackId = await createStack(broker.admin);
    await target(broker.admin, agent.id, stackId);
    const object = await deploy(
      broker.admin,
      stackId,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peer-keeps\n  namespace: default\ndata:\n  k: v\n',
    );
    const path = '/api/v1/namespaces/default/configmaps/peer-keeps';
    await eventually(async () => kubectl.get(path), { timeoutMs: 60_000, what: 'the ConfigMap applied by Brokkr’s agent' });
    await eventually(
      async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === object.id && e.status === 'SUCCESS'),
      {
        timeoutMs: 30_000,
        what: 'its SUCCESS event',
      },
    );

    // Several polls later (polling interval 2 s): the agent kept asking for its target state and the object is still there.
    const polls = () => proxy.requests.filter((r) => r.url.startsWith(`/api/v1/agents/${agent.id}/target-state`)).length;
    const start = polls();
    await eventually(async () => (polls() >= start + 5 ? true : undefined), { timeoutMs: 60_000, what: 'five more target-state polls' });
    const sample = proxy.requests.find((r) => r.url.includes('/target-state'));
    console.log(`      Brokkr's agent target-state request: ${sample?.method} ${sample?.url} ${JSON.stringify(redacted(sample?.headers))}`);
    const ws = proxy.requests.find((r) => r.url.includes('/internal/ws/agent'));
    console.log(`      Brokkr's agent WS upgrade: ${ws?.method} ${ws?.url} ${JSON.stringify(redacted(ws?.headers))}`);
    expect(await kubectl.get(path), 'ConfigMap deleted by the agent').to.not.equal(undefined);
    // Re-applied on every poll, reported once: no event (and no deployment.applied webhook) per poll.
    const successes = (await agentEvents(broker.admin, agent.id)).filter((e) => e.deployment_object_id === object.id);
    expect(successes.map((e) => e.status)).to.deep.equal(['SUCCESS']);
    // What Brokkr's SDKs (and any client with a User-Agent) see is unchanged: the incremental state, now empty.
    const sdkView = await agent.client.get<unknown[]>(`/agents/${agent.id}/target-state`);
    expect(sdkView.body).to.deep.equal([]);
  });
});

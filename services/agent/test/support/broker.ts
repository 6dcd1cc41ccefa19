import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { AgentEvent, DeploymentObject } from '@brokkr/contracts';
import { generatePak } from '@brokkr/pak';
import { freePort, spawnService, TestClient, type RunningService, type TestInfra } from '@brokkr/testkit';

/** A PAK in Brokkr's format and the hash the broker stores. */
export const mintPak = generatePak;

export interface Broker {
  url: string;
  admin: TestClient;
  service: RunningService;
  /** Stops the services; the database and NATS belong to the test's useTestInfra. */
  stop(): Promise<void>;
}

export interface BrokerOptions {
  /** Extra environment for the hub services (e.g. a webhook encryption key). */
  env?: Record<string, string>;
  /** Also run a webhook-dispatcher (it turns events into delivery rows). */
  dispatcher?: boolean;
}

/** The real api service (and optionally the webhook-dispatcher) on the block's database and NATS server (`useTestInfra({ nats: true })`). */
export async function startBroker(infra: Pick<TestInfra, 'db' | 'nats'>, options: BrokerOptions = {}): Promise<Broker> {
  const { pak, hash } = mintPak();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const common = { BROKKR__DATABASE__URL: infra.db.url, BROKKR__NATS__URL: infra.nats.url, ...options.env };
  const services: RunningService[] = [];
  const stop = async () => {
    await Promise.allSettled(services.map((s) => s.stop()));
  };
  try {
    services.push(
      await spawnService({
        service: 'api',
        env: {
          ...common,
          BROKKR__BROKER__PAK_HASH: hash,
          BROKKR__BROKER__HOST: '127.0.0.1',
          BROKKR__BROKER__PORT: String(port),
          BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '0',
        },
        readyUrl: `${url}/readyz`,
      }),
    );
    if (options.dispatcher) {
      const healthPort = await freePort();
      services.push(
        await spawnService({
          service: 'webhook-dispatcher',
          env: { ...common, BROKKR__HEALTH__PORT: String(healthPort) },
          readyUrl: `http://127.0.0.1:${healthPort}/readyz`,
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, admin: new TestClient(url, pak), service: services[0]!, stop };
}

export interface RegisteredAgent {
  id: string;
  name: string;
  clusterName: string;
  pak: string;
  client: TestClient;
}

export async function adminGeneratorId(admin: TestClient): Promise<string> {
  const res = await admin.get<{ id: string; name: string }[]>('/generators');
  const found = res.body.find((g) => g.name === 'admin-generator');
  if (!found) throw new Error(`admin-generator missing: ${JSON.stringify(res.body)}`);
  return found.id;
}

/** An agent registered with the admin generator, ACTIVE unless told otherwise. */
export async function registerAgent(admin: TestClient, options: { active?: boolean; name?: string } = {}): Promise<RegisteredAgent> {
  const name = options.name ?? `agent-${randomBytes(3).toString('hex')}`;
  const res = await admin.post('/agents', { name, cluster_name: 'test-cluster', generator_ids: [await adminGeneratorId(admin)] });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  const id = res.body.agent.id as string;
  if (options.active ?? true) expect((await admin.put(`/agents/${id}`, { status: 'ACTIVE' })).status).to.equal(200);
  return { id, name, clusterName: 'test-cluster', pak: res.body.initial_pak, client: admin.as(res.body.initial_pak) };
}

export async function createStack(admin: TestClient, name = `stack-${randomBytes(3).toString('hex')}`): Promise<string> {
  const res = await admin.post('/stacks', { name, generator_id: await adminGeneratorId(admin) });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.id;
}

export async function target(admin: TestClient, agentId: string, stackId: string): Promise<void> {
  const res = await admin.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stackId });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
}

export type { AgentEvent, DeploymentObject } from '@brokkr/contracts';

export async function deploy(admin: TestClient, stackId: string, yaml: string, marker = false): Promise<DeploymentObject> {
  const res = await admin.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml, is_deletion_marker: marker });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body;
}

export async function agentEvents(admin: TestClient, agentId: string): Promise<AgentEvent[]> {
  const res = await admin.get<AgentEvent[]>(`/agents/${agentId}/events`);
  expect(res.status).to.equal(200);
  return res.body;
}

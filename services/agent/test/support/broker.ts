import type { AnyJson } from './json.ts';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { generatePak } from '@brokkr/pak';
import { createTestDatabase, freePort, spawnService, startTestNats, type RunningService } from '@brokkr/testkit';

/** A tiny JSON client for the broker's v1 API (never throws on a status). */
export class Client {
  constructor(
    readonly url: string,
    readonly pak: string,
  ) {}

  async call<T = AnyJson>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }> {
    const res = await fetch(`${this.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.pak}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T, headers: res.headers };
  }

  get = <T = AnyJson>(path: string) => this.call<T>('GET', path);
  post = <T = AnyJson>(path: string, body?: unknown) => this.call<T>('POST', path, body ?? {});
  put = <T = AnyJson>(path: string, body: unknown) => this.call<T>('PUT', path, body);
  delete = <T = AnyJson>(path: string) => this.call<T>('DELETE', path);
}

/** A PAK in Brokkr's format and the hash the broker stores. */
export const mintPak = generatePak;

export interface Broker {
  url: string;
  admin: Client;
  service: RunningService;
  stop(): Promise<void>;
}

export interface BrokerOptions {
  /** Extra environment for the hub services (e.g. a webhook encryption key). */
  env?: Record<string, string>;
  /** Also run a webhook-dispatcher (it turns events into delivery rows). */
  dispatcher?: boolean;
}

/** The real api service (and optionally the webhook-dispatcher) on a fresh database and NATS server. */
export async function startBroker(options: BrokerOptions = {}): Promise<Broker> {
  const database = await createTestDatabase();
  const nats = await startTestNats();
  const { pak, hash } = mintPak();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const common = { BROKKR__DATABASE__URL: database.url, BROKKR__NATS__URL: nats.url, ...options.env };
  const services: RunningService[] = [];
  const stop = async () => {
    await Promise.allSettled(services.map((s) => s.stop()));
    await database.drop();
    await nats.stop();
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
  return { url, admin: new Client(url, pak), service: services[0]!, stop };
}

export interface RegisteredAgent {
  id: string;
  name: string;
  clusterName: string;
  pak: string;
  client: Client;
}

export async function adminGeneratorId(admin: Client): Promise<string> {
  const res = await admin.get<{ id: string; name: string }[]>('/generators');
  const found = res.body.find((g) => g.name === 'admin-generator');
  if (!found) throw new Error(`admin-generator missing: ${JSON.stringify(res.body)}`);
  return found.id;
}

/** An agent registered with the admin generator, ACTIVE unless told otherwise. */
export async function registerAgent(admin: Client, options: { active?: boolean; name?: string } = {}): Promise<RegisteredAgent> {
  const name = options.name ?? `agent-${randomBytes(3).toString('hex')}`;
  const res = await admin.post('/agents', { name, cluster_name: 'test-cluster', generator_ids: [await adminGeneratorId(admin)] });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  const id = res.body.agent.id as string;
  if (options.active ?? true) expect((await admin.put(`/agents/${id}`, { status: 'ACTIVE' })).status).to.equal(200);
  return { id, name, clusterName: 'test-cluster', pak: res.body.initial_pak, client: new Client(admin.url, res.body.initial_pak) };
}

export async function createStack(admin: Client, name = `stack-${randomBytes(3).toString('hex')}`): Promise<string> {
  const res = await admin.post('/stacks', { name, generator_id: await adminGeneratorId(admin) });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.id;
}

export async function target(admin: Client, agentId: string, stackId: string): Promise<void> {
  const res = await admin.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stackId });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
}

export interface DeploymentObject {
  id: string;
  stack_id: string;
  yaml_checksum: string;
  is_deletion_marker: boolean;
}

export async function deploy(admin: Client, stackId: string, yaml: string, marker = false): Promise<DeploymentObject> {
  const res = await admin.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml, is_deletion_marker: marker });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body;
}

export interface AgentEvent {
  deployment_object_id: string;
  event_type: string;
  status: string;
  message: string | null;
}

export async function agentEvents(admin: Client, agentId: string): Promise<AgentEvent[]> {
  const res = await admin.get<AgentEvent[]>(`/agents/${agentId}/events`);
  expect(res.status).to.equal(200);
  return res.body;
}

import { createHash, randomBytes } from 'node:crypto';
import type { AnyJson } from './json.ts';
import { expect } from 'chai';
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

/** A PAK in Brokkr's format and the hash the broker stores (sha256 of the long token). */
export function mintPak(): { pak: string; hash: string } {
  const long = randomBytes(24).toString('base64url').replace(/[-_]/g, 'x');
  return { pak: `brokkr_BRtest01_${long}`, hash: createHash('sha256').update(long).digest('hex') };
}

export interface Broker {
  url: string;
  admin: Client;
  service: RunningService;
  stop(): Promise<void>;
}

/** The real api service on a fresh database and NATS server. */
export async function startBroker(): Promise<Broker> {
  const database = await createTestDatabase();
  const nats = await startTestNats();
  const { pak, hash } = mintPak();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let service: RunningService;
  try {
    service = await spawnService({
      service: 'api',
      env: {
        BROKKR__DATABASE__URL: database.url,
        BROKKR__NATS__URL: nats.url,
        BROKKR__BROKER__PAK_HASH: hash,
        BROKKR__BROKER__HOST: '127.0.0.1',
        BROKKR__BROKER__PORT: String(port),
        BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '0',
      },
      readyUrl: `${url}/readyz`,
    });
  } catch (err) {
    await Promise.allSettled([database.drop(), nats.stop()]);
    throw err;
  }
  return {
    url,
    admin: new Client(url, pak),
    service,
    async stop() {
      await service.stop();
      await database.drop();
      await nats.stop();
    },
  };
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

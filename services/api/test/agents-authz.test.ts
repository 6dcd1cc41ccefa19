import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import {
  createAgent,
  createGenerator,
  createStack,
  startTestApi,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * Who may call which agent endpoint, table-driven. Every case gets a fresh
 * subject agent, so a successful write in one case (a delete, a rotation) cannot change another.
 */

type Caller = 'admin' | 'self' | 'otherAgent' | 'owner' | 'otherGenerator' | 'noPak' | 'rotatedPak';
const CALLERS: Caller[] = ['admin', 'self', 'otherAgent', 'owner', 'otherGenerator', 'noPak', 'rotatedPak'];

interface Subject {
  id: string;
  name: string;
  cluster: string;
  /** Current PAK (after one rotation). */
  pak: string;
  /** The PAK before the rotation: must be refused everywhere. */
  oldPak: string;
  /** An event the subject reported on the shared object. */
  eventId: string;
}

interface World {
  api: TestApi;
  ownerId: string;
  stackId: string;
  objectId: string;
  subject: Subject;
}

interface Case {
  name: string;
  call(client: ApiClient, w: World): Promise<ApiResponse>;
  /** Expected status per caller; callers not listed get 403 (401 for noPak / rotatedPak). */
  allowed: Partial<Record<Caller, number>>;
  /** Setup run before the call (e.g. a label to delete). */
  prepare?(w: World): Promise<void>;
}

const SELF_OR_ADMIN = (status: number) => ({ admin: status, self: status });

const CASES: Case[] = [
  { name: 'GET /agents', call: (c) => c.get('/agents'), allowed: { admin: 200, owner: 200, otherGenerator: 200 } },
  { name: 'POST /agents', call: (c) => c.post('/agents', { name: `n-${Math.random()}`, cluster_name: 'c' }), allowed: { admin: 201 } },
  {
    name: 'GET /agents/ (search)',
    call: (c, w) => c.get('/agents/', { query: { name: w.subject.name, cluster_name: w.subject.cluster } }),
    allowed: SELF_OR_ADMIN(200),
  },
  { name: 'GET /agents/{id}', call: (c, w) => c.get(`/agents/${w.subject.id}`), allowed: SELF_OR_ADMIN(200) },
  // Only an admin changes the status (deactivation.test.ts); this case is about who may update at all.
  {
    name: 'PUT /agents/{id}',
    call: (c, w) => c.put(`/agents/${w.subject.id}`, { cluster_name: w.subject.cluster }),
    allowed: SELF_OR_ADMIN(200),
  },
  { name: 'DELETE /agents/{id}', call: (c, w) => c.delete(`/agents/${w.subject.id}`), allowed: { admin: 204 } },
  { name: 'GET labels', call: (c, w) => c.get(`/agents/${w.subject.id}/labels`), allowed: SELF_OR_ADMIN(200) },
  {
    name: 'POST labels',
    call: (c, w) => c.post(`/agents/${w.subject.id}/labels`, { agent_id: w.subject.id, label: 'l1' }),
    allowed: { admin: 201 },
  },
  {
    name: 'DELETE labels/{label}',
    prepare: (w) => insert(w, 'INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [w.subject.id, 'gone']),
    call: (c, w) => c.delete(`/agents/${w.subject.id}/labels/gone`),
    allowed: { admin: 204 },
  },
  { name: 'GET annotations', call: (c, w) => c.get(`/agents/${w.subject.id}/annotations`), allowed: SELF_OR_ADMIN(200) },
  {
    name: 'POST annotations',
    call: (c, w) => c.post(`/agents/${w.subject.id}/annotations`, { agent_id: w.subject.id, key: 'k', value: 'v' }),
    allowed: { admin: 201 },
  },
  {
    name: 'DELETE annotations/{key}',
    prepare: (w) => insert(w, 'INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [w.subject.id, 'k', 'v']),
    call: (c, w) => c.delete(`/agents/${w.subject.id}/annotations/k`),
    allowed: { admin: 204 },
  },
  { name: 'GET targets', call: (c, w) => c.get(`/agents/${w.subject.id}/targets`), allowed: SELF_OR_ADMIN(200) },
  {
    name: 'POST targets',
    call: (c, w) => c.post(`/agents/${w.subject.id}/targets`, { agent_id: w.subject.id, stack_id: w.stackId }),
    allowed: { admin: 201, owner: 201 },
  },
  {
    name: 'DELETE targets/{stack_id}',
    prepare: (w) => insert(w, 'INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [w.subject.id, w.stackId]),
    call: (c, w) => c.delete(`/agents/${w.subject.id}/targets/${w.stackId}`),
    allowed: { admin: 204, owner: 204 },
  },
  { name: 'POST heartbeat', call: (c, w) => c.post(`/agents/${w.subject.id}/heartbeat`), allowed: { self: 204 } },
  { name: 'GET events', call: (c, w) => c.get(`/agents/${w.subject.id}/events`), allowed: SELF_OR_ADMIN(200) },
  {
    name: 'POST events',
    call: (c, w) =>
      c.post(`/agents/${w.subject.id}/events`, {
        agent_id: w.subject.id,
        deployment_object_id: w.objectId,
        event_type: 'DEPLOY',
        status: 'SUCCESS',
      }),
    allowed: SELF_OR_ADMIN(201),
  },
  { name: 'GET target-state', call: (c, w) => c.get(`/agents/${w.subject.id}/target-state`), allowed: SELF_OR_ADMIN(200) },
  { name: 'GET stacks', call: (c, w) => c.get(`/agents/${w.subject.id}/stacks`), allowed: SELF_OR_ADMIN(200) },
  { name: 'POST rotate-pak', call: (c, w) => c.post(`/agents/${w.subject.id}/rotate-pak`), allowed: SELF_OR_ADMIN(200) },
  { name: 'GET registrations', call: (c, w) => c.get(`/agents/${w.subject.id}/registrations`), allowed: SELF_OR_ADMIN(200) },
  { name: 'GET /agent-events', call: (c) => c.get('/agent-events'), allowed: { admin: 200 } },
  { name: 'GET /agent-events/{id}', call: (c, w) => c.get(`/agent-events/${w.subject.eventId}`), allowed: { admin: 200 } },
];

async function insert(w: World, sql: string, values: unknown[]): Promise<void> {
  await w.api.sql.query(sql, values);
}

function expectedStatus(c: Case, caller: Caller): number {
  return c.allowed[caller] ?? (caller === 'noPak' || caller === 'rotatedPak' ? 401 : 403);
}

const SERVED_LABEL = 'authz-served';

describe('api agents: authorization matrix', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let ownerId: string;
  let owner: ApiClient;
  let otherGenerator: ApiClient;
  let otherAgent: ApiClient;
  let stackId: string;
  let objectId: string;

  async function freshSubject(): Promise<Subject> {
    const { agent, initial_pak, client } = await createAgent(api.admin, { generator_ids: [ownerId] });
    const rotated = await api.admin.post(`/agents/${agent.id}/rotate-pak`);
    expect(rotated.status).to.equal(200);
    // Agents report only on objects they are served (agent-reports.test.ts): the stack's label makes it so.
    await api.sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [agent.id, SERVED_LABEL]);
    const event = await client.as(rotated.body.pak).post(`/agents/${agent.id}/events`, {
      agent_id: agent.id,
      deployment_object_id: objectId,
      event_type: 'DEPLOY',
      status: 'FAILURE',
    });
    expect(event.status, event.text).to.equal(201);
    return {
      id: agent.id,
      name: agent.name,
      cluster: agent.cluster_name,
      pak: rotated.body.pak,
      oldPak: initial_pak,
      eventId: event.body.id,
    };
  }

  function clientFor(caller: Caller, subject: Subject): ApiClient {
    const clients: Record<Caller, ApiClient> = {
      admin: api.admin,
      self: api.admin.as(subject.pak),
      otherAgent,
      owner,
      otherGenerator,
      noPak: api.anonymous,
      rotatedPak: api.admin.as(subject.oldPak),
    };
    return clients[caller];
  }

  before(async () => {
    api = await startTestApi(infra);
    const gen = await createGenerator(api.admin);
    ownerId = gen.generator.id;
    owner = gen.client;
    otherGenerator = (await createGenerator(api.admin)).client;
    otherAgent = (await createAgent(api.admin, { generator_ids: [ownerId] })).client;
    stackId = (await createStack(owner, { generator_id: ownerId })).id;
    expect((await owner.post(`/stacks/${stackId}/labels`, SERVED_LABEL)).status).to.equal(201);
    const object = await owner.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    expect(object.status, object.text).to.equal(201);
    objectId = object.body.id;
  });

  after(async () => {
    await api?.stop();
  });

  for (const c of CASES) {
    it(`${c.name}: ${CALLERS.map((caller) => `${caller} ${expectedStatus(c, caller)}`).join(', ')}`, async () => {
      const outcomes: Record<string, number> = {};
      const expected: Record<string, number> = {};
      for (const caller of CALLERS) {
        const world: World = { api, ownerId, stackId, objectId, subject: await freshSubject() };
        await c.prepare?.(world);
        const res = await c.call(clientFor(caller, world.subject), world);
        outcomes[caller] = res.status;
        expected[caller] = expectedStatus(c, caller);
        if (res.status === 403) expect(res.body.code, `${caller}: ${res.text}`).to.be.a('string');
      }
      expect(outcomes).to.deep.equal(expected);
    });
  }
});

import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import {
  createGenerator,
  createStack,
  insertAgentRow,
  startTestApi,
  uniqueName,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * Who may call which stack / deployment-object endpoint. Expectations are "status" or
 * "status code"; every request runs against the same owned stack (or a fresh one for deletes).
 */
type Caller = 'admin' | 'targetedAgent' | 'otherAgent' | 'owner' | 'otherGenerator' | 'noPak' | 'rotatedPak';
const CALLERS: Caller[] = ['admin', 'targetedAgent', 'otherAgent', 'owner', 'otherGenerator', 'noPak', 'rotatedPak'];

interface World {
  stackId: string;
  objectId: string;
  ownerId: string;
  /** The stack as GET returns it (the full object PUT expects). */
  stackObject(): Promise<unknown>;
  /** A fresh stack of the owner, with a label `l` and an annotation `k`. */
  freshStack(): Promise<string>;
}

interface Case {
  name: string;
  call(client: ApiClient, world: World): Promise<ApiResponse>;
  expect: Record<Caller, string>;
}

const NO_AUTH = { noPak: '401 unauthorized', rotatedPak: '401 unauthorized' } as const;

/** Owner-only endpoints: agents and other generators fail Brokkr's fetch_owned_stack. */
function ownedOnly(ok: string): Record<Caller, string> {
  const denied = '403 stack_not_owned';
  return { admin: ok, owner: ok, targetedAgent: denied, otherAgent: denied, otherGenerator: denied, ...NO_AUTH };
}

/** Label and annotation reads: an explicit agent target is enough, a label match is not. */
const METADATA_READ: Record<Caller, string> = {
  admin: '200',
  owner: '200',
  targetedAgent: '200',
  otherAgent: '403 stack_not_accessible',
  otherGenerator: '403 stack_not_accessible',
  ...NO_AUTH,
};

const CASES: Case[] = [
  {
    name: 'GET /stacks',
    call: (c) => c.get('/stacks'),
    expect: {
      admin: '200',
      owner: '200',
      otherGenerator: '200',
      targetedAgent: '403 stacks_list_denied',
      otherAgent: '403 stacks_list_denied',
      ...NO_AUTH,
    },
  },
  {
    name: 'POST /stacks (for the owner)',
    call: (c, w) => c.post('/stacks', { name: uniqueName('m'), generator_id: w.ownerId }),
    expect: {
      admin: '201',
      owner: '201',
      otherGenerator: '403 stack_generator_mismatch',
      targetedAgent: '403 stack_create_denied',
      otherAgent: '403 stack_create_denied',
      ...NO_AUTH,
    },
  },
  { name: 'GET /stacks/{id}', call: (c, w) => c.get(`/stacks/${w.stackId}`), expect: ownedOnly('200') },
  {
    name: 'PUT /stacks/{id}',
    call: async (c, w) => c.put(`/stacks/${w.stackId}`, await w.stackObject()),
    expect: ownedOnly('200'),
  },
  { name: 'DELETE /stacks/{id}', call: async (c, w) => c.delete(`/stacks/${await w.freshStack()}`), expect: ownedOnly('204') },
  { name: 'GET /stacks/{id}/labels', call: (c, w) => c.get(`/stacks/${w.stackId}/labels`), expect: METADATA_READ },
  { name: 'POST /stacks/{id}/labels', call: (c, w) => c.post(`/stacks/${w.stackId}/labels`, uniqueName('l')), expect: ownedOnly('201') },
  {
    name: 'DELETE /stacks/{id}/labels/{label}',
    call: async (c, w) => c.delete(`/stacks/${await w.freshStack()}/labels/l`),
    expect: ownedOnly('204'),
  },
  { name: 'GET /stacks/{id}/annotations', call: (c, w) => c.get(`/stacks/${w.stackId}/annotations`), expect: METADATA_READ },
  {
    name: 'POST /stacks/{id}/annotations',
    call: (c, w) => c.post(`/stacks/${w.stackId}/annotations`, { stack_id: w.stackId, key: uniqueName('k'), value: 'v' }),
    expect: ownedOnly('201'),
  },
  {
    name: 'DELETE /stacks/{id}/annotations/{key}',
    call: async (c, w) => c.delete(`/stacks/${await w.freshStack()}/annotations/k`),
    expect: ownedOnly('204'),
  },
  {
    name: 'GET /stacks/{id}/deployment-objects',
    call: (c, w) => c.get(`/stacks/${w.stackId}/deployment-objects`),
    expect: ownedOnly('200'),
  },
  {
    name: 'POST /stacks/{id}/deployment-objects',
    call: (c, w) => c.post(`/stacks/${w.stackId}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' }),
    expect: ownedOnly('201'),
  },
  {
    name: 'GET /deployment-objects/{id}',
    call: (c, w) => c.get(`/deployment-objects/${w.objectId}`),
    expect: {
      admin: '200',
      owner: '200',
      targetedAgent: '200',
      otherAgent: '403 agent_not_associated',
      otherGenerator: '403 generator_not_associated',
      ...NO_AUTH,
    },
  },
];

describe('api stacks and deployment objects: authorization matrix', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let world: World;
  const clients = {} as Record<Caller, ApiClient>;

  async function insertAgent(): Promise<{ id: string; client: ApiClient }> {
    const { id, pak } = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    return { id, client: api.admin.as(pak) };
  }

  before(async () => {
    api = await startTestApi(infra);
    const owner = await createGenerator(api.admin);
    const other = await createGenerator(api.admin);
    const rotated = await api.admin.post(`/generators/${owner.generator.id}/rotate-pak`);
    expect(rotated.status, rotated.text).to.be.oneOf([200, 201]);
    const ownerClient = api.admin.as(rotated.body.pak as string);

    const stackId = (await createStack(api.admin, { generator_id: owner.generator.id })).id;
    expect((await api.admin.post(`/stacks/${stackId}/labels`, 'shared')).status).to.equal(201);
    const object = await api.admin.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: 'a: 1\n' });
    expect(object.status).to.equal(201);

    const targeted = await insertAgent();
    await api.sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [targeted.id, stackId]);
    // Matches the stack by label and is registered with its generator, but has no explicit target.
    const matching = await insertAgent();
    await api.sql.query(`INSERT INTO agent_labels (agent_id, label) VALUES ($1, 'shared')`, [matching.id]);
    await api.sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)', [
      matching.id,
      owner.generator.id,
    ]);

    Object.assign(clients, {
      admin: api.admin,
      owner: ownerClient,
      otherGenerator: other.client,
      targetedAgent: targeted.client,
      otherAgent: matching.client,
      noPak: api.anonymous,
      rotatedPak: owner.client,
    } satisfies Record<Caller, ApiClient>);

    world = {
      stackId,
      objectId: object.body.id,
      ownerId: owner.generator.id,
      stackObject: async () => (await api.admin.get(`/stacks/${stackId}`)).body,
      async freshStack() {
        const id = (await createStack(api.admin, { generator_id: owner.generator.id })).id;
        await api.admin.post(`/stacks/${id}/labels`, 'l');
        await api.admin.post(`/stacks/${id}/annotations`, { stack_id: id, key: 'k', value: 'v' });
        await api.sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [targeted.id, id]);
        return id;
      },
    };
  });

  after(async () => {
    await api?.stop();
  });

  for (const testCase of CASES) {
    it(testCase.name, async () => {
      const outcomes: Record<string, string> = {};
      for (const caller of CALLERS) {
        const res = await testCase.call(clients[caller], world);
        const wanted = testCase.expect[caller];
        outcomes[caller] = wanted.includes(' ') ? `${res.status} ${res.body?.code}` : String(res.status);
      }
      expect(outcomes).to.deep.equal(testCase.expect);
    });
  }

  it('shows a generator only its own stacks', async () => {
    const own = await clients.owner.get('/stacks');
    expect(own.body.map((s: { id: string }) => s.id)).to.include(world.stackId);
    const other = await clients.otherGenerator.get('/stacks');
    expect(other.body.map((s: { id: string }) => s.id)).to.not.include(world.stackId);
  });
});

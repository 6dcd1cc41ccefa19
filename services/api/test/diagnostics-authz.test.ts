import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import {
  ApiClient,
  adminGeneratorId,
  createGenerator,
  createStack,
  insertAgentRow,
  startTestApi,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

type Caller = 'admin' | 'target agent' | 'other agent' | 'generator';
const CALLERS: readonly Caller[] = ['admin', 'target agent', 'other agent', 'generator'];

/** What each caller gets: a status, or [status, code]. */
type Expected = Record<Caller, number | [number, string]>;

const RESULT = { pod_statuses: '[]', events: '[]', log_tails: null, collected_at: '2026-01-15T10:00:00Z' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/**
 * Who may call each diagnostics endpoint: the admin requests; the admin and
 * the target agent read and claim; only the target agent posts the result; an agent lists only
 * its own pending requests. An unknown request is 404 for everyone (checked first).
 */
describe('api diagnostics: authorization matrix', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let clients: Record<Caller, ApiClient>;
  let target: string;
  let objectId: string;

  async function newRequest(): Promise<string> {
    const res = await api.admin.post(`/deployment-objects/${objectId}/diagnostics`, { agent_id: target });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  async function claimedRequest(): Promise<string> {
    const id = await newRequest();
    expect((await clients['target agent'].post(`/diagnostics/${id}/claim`)).status).to.equal(200);
    return id;
  }

  before(async () => {
    api = await startTestApi(infra);
    const a = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const b = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const generator = await createGenerator(api.admin);
    const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
    const object = await api.admin.post(`/stacks/${stack.id}/deployment-objects`, {
      yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: authz\n',
    });
    expect(object.status, object.text).to.equal(201);
    objectId = object.body.id;
    target = a.id;
    clients = { admin: api.admin, 'target agent': api.admin.as(a.pak), 'other agent': api.admin.as(b.pak), generator: generator.client };
  });
  after(() => api?.stop());

  const notOwned: [number, string] = [403, 'diagnostic_not_owned'];
  const cases: { name: string; expected: Expected; call(client: ApiClient): Promise<ApiResponse> }[] = [
    {
      name: 'POST /deployment-objects/{id}/diagnostics',
      expected: {
        admin: 201,
        'target agent': [403, 'admin_required'],
        'other agent': [403, 'admin_required'],
        generator: [403, 'admin_required'],
      },
      call: (c) => c.post(`/deployment-objects/${objectId}/diagnostics`, { agent_id: target }),
    },
    {
      name: 'GET /diagnostics/{id}',
      expected: { admin: 200, 'target agent': 200, 'other agent': notOwned, generator: notOwned },
      call: async (c) => c.get(`/diagnostics/${await newRequest()}`),
    },
    {
      name: 'GET /agents/{target}/diagnostics/pending',
      expected: { admin: 200, 'target agent': 200, 'other agent': [403, 'agent_pak_mismatch'], generator: [403, 'agent_pak_mismatch'] },
      call: (c) => c.get(`/agents/${target}/diagnostics/pending`),
    },
    {
      name: 'POST /diagnostics/{id}/claim',
      expected: { admin: 200, 'target agent': 200, 'other agent': notOwned, generator: notOwned },
      call: async (c) => c.post(`/diagnostics/${await newRequest()}/claim`),
    },
    {
      name: 'POST /diagnostics/{id}/result (the target agent only: the admin too gets 403)',
      expected: { admin: notOwned, 'target agent': 201, 'other agent': notOwned, generator: notOwned },
      call: async (c) => c.post(`/diagnostics/${await claimedRequest()}/result`, RESULT),
    },
    {
      name: 'GET /diagnostics/{unknown}',
      expected: Object.fromEntries(CALLERS.map((c) => [c, [404, 'diagnostic_not_found']])) as Expected,
      call: (c) => c.get(`/diagnostics/${UNKNOWN}`),
    },
    {
      name: 'POST /diagnostics/{unknown}/claim',
      expected: Object.fromEntries(CALLERS.map((c) => [c, [404, 'diagnostic_not_found']])) as Expected,
      call: (c) => c.post(`/diagnostics/${UNKNOWN}/claim`),
    },
    {
      name: 'POST /diagnostics/{unknown}/result',
      expected: Object.fromEntries(CALLERS.map((c) => [c, [404, 'diagnostic_not_found']])) as Expected,
      call: (c) => c.post(`/diagnostics/${UNKNOWN}/result`, RESULT),
    },
  ];

  for (const { name, expected, call } of cases) {
    it(name, async () => {
      for (const caller of CALLERS) {
        const res = await call(clients[caller]);
        const want = expected[caller];
        const [status, code] = typeof want === 'number' ? [want, undefined] : want;
        expect(res.status, `${caller}: ${res.text}`).to.equal(status);
        if (code) expect(res.body.code, caller).to.equal(code);
      }
    });
  }

  it('a refused claim or result changes nothing', async () => {
    const pending = await newRequest();
    expect((await clients['other agent'].post(`/diagnostics/${pending}/claim`)).status).to.equal(403);
    expect((await api.admin.get(`/diagnostics/${pending}`)).body.request.status).to.equal('pending');
    const claimed = await claimedRequest();
    expect((await api.admin.post(`/diagnostics/${claimed}/result`, RESULT)).status).to.equal(403);
    const read = (await api.admin.get(`/diagnostics/${claimed}`)).body;
    expect([read.request.status, read.result]).to.deep.equal(['claimed', null]);
  });
});

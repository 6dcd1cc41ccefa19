import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { ApiClient, createGenerator, insertAgentRow, startTestApi, type ApiResponse, type TestApi } from './support/index.ts';

type Caller = 'admin' | 'targeted agent' | 'untargeted agent' | 'generator';
const CALLERS: readonly Caller[] = ['admin', 'targeted agent', 'untargeted agent', 'generator'];

/** What each caller gets: a status, or [status, code]. */
type Expected = Record<Caller, number | [number, string]>;

const adminOnly = (ok: number): Expected => ({
  admin: ok,
  'targeted agent': [403, 'admin_required'],
  'untargeted agent': [403, 'admin_required'],
  generator: [403, 'admin_required'],
});

/**
 * Who may call each work-order endpoint: the admin-only queue and log, the
 * agent's own pending list, claim for oneself, complete by the claimer.
 */
describe('api work orders: authorization matrix', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let clients: Record<Caller, ApiClient>;
  let targeted: string;

  async function newOrder(): Promise<string> {
    const res = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x', targeting: { agent_ids: [targeted] } });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  async function claimedOrder(): Promise<string> {
    const id = await newOrder();
    expect((await clients['targeted agent'].post(`/work-orders/${id}/claim`, { agent_id: targeted })).status).to.equal(200);
    return id;
  }

  before(async () => {
    api = await startTestApi(infra);
    const a = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const b = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const generator = await createGenerator(api.admin);
    targeted = a.id;
    clients = {
      admin: api.admin,
      'targeted agent': api.admin.as(a.pak),
      'untargeted agent': api.admin.as(b.pak),
      generator: generator.client,
    };
  });
  after(() => api?.stop());

  const cases: { name: string; expected: Expected; call(client: ApiClient): Promise<ApiResponse> }[] = [
    { name: 'GET /work-orders', expected: adminOnly(200), call: (c) => c.get('/work-orders') },
    {
      name: 'POST /work-orders',
      expected: adminOnly(201),
      call: (c) => c.post('/work-orders', { work_type: 'custom', yaml_content: 'x', targeting: { agent_ids: [targeted] } }),
    },
    { name: 'GET /work-orders/{id}', expected: adminOnly(200), call: async (c) => c.get(`/work-orders/${await newOrder()}`) },
    { name: 'DELETE /work-orders/{id}', expected: adminOnly(204), call: async (c) => c.delete(`/work-orders/${await newOrder()}`) },
    { name: 'GET /work-order-log', expected: adminOnly(200), call: (c) => c.get('/work-order-log') },
    {
      name: 'GET /work-order-log/{id}',
      expected: adminOnly(200),
      call: async (c) => {
        const id = await newOrder();
        expect((await api.admin.post(`/work-orders/${id}/complete`, { success: true })).status).to.equal(200);
        return c.get(`/work-order-log/${id}`);
      },
    },
    {
      name: 'GET /agents/{targeted}/work-orders/pending',
      expected: {
        admin: 200,
        'targeted agent': 200,
        'untargeted agent': [403, 'agent_pak_mismatch'],
        generator: [403, 'agent_pak_mismatch'],
      },
      call: (c) => c.get(`/agents/${targeted}/work-orders/pending`),
    },
    {
      name: 'POST /work-orders/{id}/claim for the targeted agent',
      expected: {
        admin: 200,
        'targeted agent': 200,
        'untargeted agent': [403, 'agent_pak_mismatch'],
        generator: [403, 'agent_pak_mismatch'],
      },
      call: async (c) => c.post(`/work-orders/${await newOrder()}/claim`, { agent_id: targeted }),
    },
    {
      name: 'POST /work-orders/{id}/complete of an order the targeted agent claimed',
      expected: {
        admin: 200,
        'targeted agent': 200,
        'untargeted agent': [403, 'work_order_not_claimed_by_agent'],
        generator: [403, 'work_order_not_claimed_by_agent'],
      },
      call: async (c) => c.post(`/work-orders/${await claimedOrder()}/complete`, { success: true }),
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

  it('an untargeted agent claiming for itself gets 404 work_order_not_claimable', async () => {
    const id = await newOrder();
    const untargeted = (await clients['untargeted agent'].post('/auth/pak')).body.agent as string;
    const res = await clients['untargeted agent'].post(`/work-orders/${id}/claim`, { agent_id: untargeted });
    expect([res.status, res.body.code]).to.deep.equal([404, 'work_order_not_claimable']);
  });
});

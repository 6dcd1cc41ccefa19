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
 * Deactivation means something (docs/security.md): only an admin changes an agent's status or a
 * generator's is_active; an INACTIVE agent receives nothing, and a deactivated generator's PAK
 * does not authenticate. Black-box, through HTTP.
 */
describe('api deactivation', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  function expectError(res: ApiResponse, status: number, code: string, what = ''): void {
    expect(res.status, `${what} ${res.text}`).to.equal(status);
    expect(res.headers.get('content-type'), what).to.match(/^application\/json/);
    expect(res.body.code, what).to.equal(code);
  }

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('refuses an agent changing its own status (403 status_change_forbidden); an INACTIVE agent gets an empty target state', async () => {
    const { generator, client: gen } = await createGenerator(api.admin);
    const { agent, client } = await createAgent(api.admin, { generator_ids: [generator.id] });
    expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'deact' })).status).to.equal(201);
    const stack = await createStack(gen, { generator_id: generator.id });
    expect((await gen.post(`/stacks/${stack.id}/labels`, 'deact')).status).to.equal(201);
    const object = await gen.post<{ id: string }>(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    expect(object.status).to.equal(201);
    const served = async () => {
      const res = await client.get<{ id: string }[]>(`/agents/${agent.id}/target-state`);
      expect(res.status).to.equal(200);
      return res.body.map((o) => o.id);
    };

    expect(agent.status).to.equal('INACTIVE');
    expectError(await client.put(`/agents/${agent.id}`, { status: 'ACTIVE' }), 403, 'status_change_forbidden');
    expect((await api.admin.get(`/agents/${agent.id}`)).body.status).to.equal('INACTIVE');
    expect(await served()).to.deep.equal([]);
    // Its other fields stay its own, and sending its current status back is no change.
    const renamed = await client.put(`/agents/${agent.id}`, { cluster_name: 'still-mine', status: 'INACTIVE' });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body).to.include({ cluster_name: 'still-mine', status: 'INACTIVE' });

    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    expect(await served()).to.deep.equal([object.body.id]);
    expectError(await client.put(`/agents/${agent.id}`, { status: 'INACTIVE' }), 403, 'status_change_forbidden');
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'INACTIVE' })).body.status).to.equal('INACTIVE');
    expect(await served()).to.deep.equal([]);
  });

  it('refuses every request of a deactivated generator (401) and lets only an admin change is_active', async () => {
    const { generator, client } = await createGenerator(api.admin);
    const stack = await createStack(client, { generator_id: generator.id });
    const requests: [string, (c: ApiClient) => Promise<ApiResponse>][] = [
      ['GET its generator', (c) => c.get(`/generators/${generator.id}`)],
      ['GET its stack', (c) => c.get(`/stacks/${stack.id}`)],
      ['POST a deployment object', (c) => c.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' })],
      ['GET registration requests', (c) => c.get(`/generators/${generator.id}/registration-requests`)],
      ['PUT is_active back', (c) => c.put(`/generators/${generator.id}`, { ...generator, is_active: true })],
    ];
    for (const [what, call] of requests.slice(0, 2)) expect((await call(client)).status, what).to.equal(200);

    expectError(await client.put(`/generators/${generator.id}`, { ...generator, is_active: false }), 403, 'is_active_change_forbidden');
    expect((await client.get(`/generators/${generator.id}`)).body.is_active).to.equal(true);

    // The PAK was just used (and cached): deactivation must stop it at once all the same.
    const off = await api.admin.put(`/generators/${generator.id}`, { ...generator, is_active: false });
    expect(off.status, off.text).to.equal(200);
    expect(off.body.is_active).to.equal(false);
    for (const [what, call] of requests) expectError(await call(client), 401, 'unauthorized', what);
    expect((await api.admin.get(`/generators/${generator.id}`)).body.is_active, 'still inactive').to.equal(false);

    const on = await api.admin.put(`/generators/${generator.id}`, { ...generator, is_active: true });
    expect(on.body.is_active).to.equal(true);
    const back = await client.get(`/generators/${generator.id}`);
    expect(back.status, back.text).to.equal(200);
  });

  it('gives an agent an admin deactivated no work: no pending work orders, diagnostics or previews, no claim; reactivated, it gets them', async () => {
    const { generator, client: gen } = await createGenerator(api.admin);
    const { agent, client } = await createAgent(api.admin, { generator_ids: [generator.id] });
    const setStatus = async (status: string) => expect((await api.admin.put(`/agents/${agent.id}`, { status })).status).to.equal(200);
    await setStatus('ACTIVE');
    const stack = await createStack(gen, { generator_id: generator.id });
    expect((await gen.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
    const object = await gen.post<{ id: string }>(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    const order = await api.admin.post<{ id: string }>('/work-orders', {
      work_type: 'custom',
      yaml_content: 'x',
      target_agent_ids: [agent.id],
    });
    const diagnostic = await api.admin.post<{ id: string }>(`/deployment-objects/${object.body.id}/diagnostics`, { agent_id: agent.id });
    const preview = await gen.post<{ id: string }>(`/stacks/${stack.id}/previews`, { yaml_content: 'kind: ConfigMap\n' });
    for (const res of [object, order, diagnostic, preview]) expect(res.status, res.text).to.equal(201);
    const pending = async () => {
      const lists = await Promise.all(
        ['work-orders', 'diagnostics', 'previews'].map((kind) => client.get<{ id: string }[]>(`/agents/${agent.id}/${kind}/pending`)),
      );
      return lists.map((res) => (expect(res.status, res.text).to.equal(200), res.body.map((row) => row.id)));
    };
    expect(await pending()).to.deep.equal([[order.body.id], [diagnostic.body.id], [preview.body.id]]);

    await setStatus('INACTIVE');
    expect(await pending()).to.deep.equal([[], [], []]);
    expectError(await client.post(`/work-orders/${order.body.id}/claim`, { agent_id: agent.id }), 404, 'work_order_not_claimable');
    expectError(await client.post(`/diagnostics/${diagnostic.body.id}/claim`), 409, 'diagnostic_already_claimed');
    expect((await client.get(`/agents/${agent.id}/webhooks/pending`)).body).to.deep.equal([]);
    const untouched = await api.sql.query(
      `SELECT (SELECT status FROM work_orders WHERE id = $1) AS order_status, (SELECT status FROM diagnostic_requests WHERE id = $2) AS diagnostic_status`,
      [order.body.id, diagnostic.body.id],
    );
    expect(untouched.rows[0]).to.deep.equal({ order_status: 'PENDING', diagnostic_status: 'pending' });

    await setStatus('ACTIVE');
    expect(await pending()).to.deep.equal([[order.body.id], [diagnostic.body.id], [preview.body.id]]);
    const claimed = await client.post(`/work-orders/${order.body.id}/claim`, { agent_id: agent.id });
    expect([claimed.status, claimed.body.status]).to.deep.equal([200, 'CLAIMED']);
    const collected = await client.post(`/diagnostics/${diagnostic.body.id}/claim`);
    expect([collected.status, collected.body.status]).to.deep.equal([200, 'claimed']);
  });
});

import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { ApiClient, createAgent, insertAgentRow, startTestApi, uniqueName, type ApiResponse, type TestApi } from './support/index.ts';

/**
 * The pending list's long-poll (our extension): `wait` holds an empty answer until an order for
 * the agent is created; a work-order hint never ends a target-state long-poll whose state is
 * unchanged. No timing is asserted: held requests are detected through the replica's gauge.
 */
describe('api work orders: pending long-poll', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  async function waiting(): Promise<number> {
    const { text } = await new ApiClient(api.url, null).get('//metrics');
    const match = /^brokkr_target_state_long_polls_waiting(?:\{[^}]*\})? (\d+)/m.exec(text);
    return match ? Number(match[1]) : 0;
  }

  /** Starts a request and returns once the api holds it (wrapped, so the caller does not await the response). */
  async function held(request: () => Promise<ApiResponse>): Promise<{ response: Promise<ApiResponse>; settled: () => boolean }> {
    const before = await waiting();
    let done = false;
    const response = request().finally(() => (done = true));
    response.catch(() => undefined);
    await eventually(async () => (await waiting()) > before, { timeoutMs: 30_000, what: 'the request to be held' });
    return { response, settled: () => done };
  }

  before(async () => {
    api = await startTestApi(infra);
  });
  after(() => api?.stop());

  it('wakes a held request when an order targeting the agent (by label) is created', async () => {
    const label = uniqueName('wake');
    const agent = await insertAgentRow(api.sql, { labels: [label], status: 'ACTIVE' });
    const client = api.admin.as(agent.pak);
    const poll = await held(() => client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 60 } }));
    const created = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x', targeting: { labels: [label] } });
    expect(created.status).to.equal(201);
    const res = await poll.response;
    expect(res.status).to.equal(200);
    expect(res.body.map((o: { id: string }) => o.id)).to.deep.equal([created.body.id]);
  });

  it('answers a non-empty list at once, and an empty one with [] when the wait ends', async () => {
    const agent = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const client = api.admin.as(agent.pak);
    const empty = await client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 1 } });
    expect([empty.status, empty.body]).to.deep.equal([200, []]);
    const created = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x', target_agent_ids: [agent.id] });
    const full = await client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 60 } });
    expect(full.body.map((o: { id: string }) => o.id)).to.deep.equal([created.body.id]);
    const bad = await client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 'soon' } });
    expect([bad.status, bad.body.code]).to.deep.equal([400, 'invalid_query']);
  });

  it('keeps waiting when a hint is for another work type or an order another agent took', async () => {
    const agent = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const client = api.admin.as(agent.pak);
    const poll = await held(() => client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 60, work_type: 'build' } }));
    const custom = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x', target_agent_ids: [agent.id] });
    expect(custom.status).to.equal(201);
    // The hint reached this process (a second, unfiltered poll sees the order), yet the build poll is still held.
    const other = await client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 60 } });
    expect(other.body).to.have.length(1);
    await eventually(async () => (await waiting()) >= 1, { what: 'the build poll to stay held' });
    expect(poll.settled()).to.equal(false);
    const build = await api.admin.post('/work-orders', { work_type: 'build', yaml_content: 'x', target_agent_ids: [agent.id] });
    const res = await poll.response;
    expect(res.body.map((o: { id: string }) => o.id)).to.deep.equal([build.body.id]);
  });

  it('a work-order hint does not end a target-state long-poll whose state is unchanged (304 at the end of the wait)', async () => {
    const { agent, client } = await createAgent(api.admin);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    const first = await client.get(`/agents/${agent.id}/target-state`);
    const etag = first.headers.get('etag')!;
    const state = await held(() =>
      client.get(`/agents/${agent.id}/target-state`, { query: { wait: 4 }, headers: { 'if-none-match': etag } }),
    );
    const pending = await held(() => client.get(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 60 } }));
    const created = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x', target_agent_ids: [agent.id] });
    expect(created.status).to.equal(201);
    // The same hint woke the pending poll, so it has reached the target-state request too.
    expect((await pending.response).body).to.have.length(1);
    expect(state.settled()).to.equal(false);
    const res = await state.response;
    expect(res.status).to.equal(304);
    expect(res.headers.get('etag')).to.equal(etag);
  });
});

import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  ApiClient,
  createAgent,
  createGenerator,
  createStack,
  startTestApi,
  type ApiProcess,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * The target-state long-poll across replicas: a request held by one api process is answered when
 * a write through ANOTHER process (same Postgres, same NATS) changes the agent's state. No timing
 * is asserted: a waiting request is detected through the replica's gauge, and outcomes are checked.
 */
describe('api target state: long-poll across replicas', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;
  /** The generator's client on the replica. */
  let genOnReplica: ApiClient;
  let genId: string;
  let adminOnReplica: ApiClient;

  async function waiting(url: string): Promise<number> {
    const { text } = await new ApiClient(url, null).get('//metrics');
    const match = /^brokkr_target_state_long_polls_waiting(?:\{[^}]*\})? (\d+)/m.exec(text);
    return match ? Number(match[1]) : 0;
  }

  /** An ACTIVE agent labelled `label`, registered with the generator, with its current ETag. */
  async function agentWithState(label: string) {
    const { agent, client } = await createAgent(api.admin, { generator_ids: [genId] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    const first = await client.get(`/agents/${agent.id}/target-state`);
    return { id: agent.id, client, etag: first.headers.get('etag')!, objects: first.body as { id: string }[] };
  }

  /**
   * Starts a held request on the first process and returns once the process holds it (wrapped:
   * returning the bare promise from an async function would wait for the response itself).
   */
  async function hold(agent: { id: string; client: ApiClient; etag: string }): Promise<{ response: Promise<ApiResponse> }> {
    const before = await waiting(api.url);
    const response = agent.client.get(`/agents/${agent.id}/target-state`, {
      query: { wait: 60 },
      headers: { 'if-none-match': agent.etag },
    });
    response.catch(() => undefined);
    await eventually(async () => (await waiting(api.url)) > before, { timeoutMs: 30_000, what: 'the request to be held' });
    return { response };
  }

  before(async () => {
    api = await startTestApi(infra);
    replica = await api.spawnReplica();
    const gen = await createGenerator(api.admin);
    genId = gen.generator.id;
    genOnReplica = new ApiClient(replica.url, gen.pak);
    adminOnReplica = new ApiClient(replica.url, api.adminPak);
  });

  after(async () => {
    await api?.stop();
  });

  it('answers a held request with 200 and the new object when another replica publishes one', async () => {
    const labelled = await agentWithState('lp-new-object');
    const stack = await createStack(genOnReplica, { generator_id: genId });
    expect((await genOnReplica.post(`/stacks/${stack.id}/labels`, 'lp-new-object')).status).to.equal(201);
    // The label serves no object yet, but it gives the agent a stack to map to its generator: its
    // grants digest (Brokkr-Grants) and so its ETag moved. The agent reads once more, then waits.
    const now = await eventually(
      async () => {
        const res = await labelled.client.get(`/agents/${labelled.id}/target-state`);
        return res.headers.get('etag') !== labelled.etag ? res : undefined;
      },
      { timeoutMs: 30_000, what: 'the ETag of the new grants' },
    );
    expect(now.body).to.deep.equal([]);
    const agent = { ...labelled, etag: now.headers.get('etag')! };
    const { response } = await hold(agent);
    const object = await genOnReplica.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    expect(object.status, object.text).to.equal(201);
    const res = await response;
    expect(res.status).to.equal(200);
    expect(res.body.map((o: { id: string }) => o.id)).to.deep.equal([object.body.id]);
    expect(res.headers.get('etag')).to.not.equal(agent.etag);
  });

  it('wakes a held request when another replica changes the agent (a new label match)', async () => {
    const agent = await agentWithState('lp-agent-side');
    const stack = await createStack(genOnReplica, { generator_id: genId });
    expect((await genOnReplica.post(`/stacks/${stack.id}/labels`, 'lp-second')).status).to.equal(201);
    const object = await genOnReplica.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: Secret\n' });
    const { response } = await hold(agent);
    expect((await adminOnReplica.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'lp-second' })).status).to.equal(201);
    const res = await response;
    expect(res.status).to.equal(200);
    expect(res.body.map((o: { id: string }) => o.id)).to.deep.equal([object.body.id]);
  });

  it('answers 304 when the wait ends without a change', async () => {
    const agent = await agentWithState('lp-quiet');
    const res = await agent.client.get(`/agents/${agent.id}/target-state`, {
      query: { wait: 1 },
      headers: { 'if-none-match': agent.etag },
    });
    expect(res.status).to.equal(304);
    expect(res.text).to.equal('');
  });

  it('stops holding a request whose client went away', async () => {
    const agent = await agentWithState('lp-gone');
    const before = await waiting(api.url);
    const controller = new AbortController();
    const request = fetch(`${api.url}/api/v1/agents/${agent.id}/target-state?wait=60`, {
      headers: { authorization: `Bearer ${api.adminPak}`, 'if-none-match': agent.etag },
      signal: controller.signal,
    });
    request.catch(() => undefined);
    await eventually(async () => (await waiting(api.url)) > before, { timeoutMs: 30_000, what: 'the request to be held' });
    controller.abort();
    await eventually(async () => (await waiting(api.url)) === before, { timeoutMs: 30_000, what: 'the held request to be released' });
  });
});

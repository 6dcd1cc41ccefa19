import { request } from 'node:http';
import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { adminGeneratorId, createAgent, createStack, startTestApi, type TestApi } from './support/index.ts';

/** A request exactly as Brokkr 0.9.1's Rust agent sends it (recorded from the binary): no User-Agent, `api-version`. */
function asBrokkrAgent(
  target: { url: string; pak: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const { pak } = target;
  const url = new URL(path, target.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname + url.search,
        headers: {
          accept: 'application/json',
          'api-version': '0.9.1',
          authorization: `Bearer ${pak}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Without Brokkr's agent binary: Brokkr's agent is served the full target state (so
 * its gap detection keeps what it deployed) and its per-poll repeated SUCCESS is answered without a
 * new event; every other client (SDKs send a User-Agent) sees Brokkr's incremental answer.
 */
describe("ws: serving Brokkr's own agent (target state, repeated events)", function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  before(async () => (api = await startTestApi(infra)));
  after(() => api?.stop());

  it("full target state for Brokkr's agent, incremental for SDKs; a repeated SUCCESS adds no event", async () => {
    const generator = await adminGeneratorId(api.admin);
    const { agent, initial_pak: pak } = await createAgent(api.admin, { generator_ids: [generator] });
    await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' });
    const stack = await createStack(api.admin, { generator_id: generator });
    await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
    const object = (await api.admin.post<{ id: string }>(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'a: 1\n' })).body;
    const statePath = `/api/v1/agents/${agent.id}/target-state`;
    const event = { agent_id: agent.id, deployment_object_id: object.id, event_type: 'DEPLOY', status: 'SUCCESS', message: null };

    const first = await asBrokkrAgent({ url: api.url, pak }, 'POST', `/api/v1/agents/${agent.id}/events`, event);
    expect(first.status).to.equal(201);
    const again = await asBrokkrAgent({ url: api.url, pak }, 'POST', `/api/v1/agents/${agent.id}/events`, event);
    expect(again.status).to.equal(201);
    expect((again.body as { id: string }).id).to.equal((first.body as { id: string }).id);

    const agentView = await asBrokkrAgent({ url: api.url, pak }, 'GET', statePath);
    expect((agentView.body as { id: string }[]).map((o) => o.id)).to.deep.equal([object.id]);
    const sdkView = await api.admin.as(pak).get<unknown[]>(`/agents/${agent.id}/target-state`);
    expect(sdkView.body).to.deep.equal([]);
    // Naming a mode gets exactly that mode, whoever asks.
    expect((await asBrokkrAgent({ url: api.url, pak }, 'GET', `${statePath}?mode=incremental`)).body).to.deep.equal([]);

    const { rows } = await api.sql.query('SELECT id FROM agent_events WHERE deployment_object_id = $1', [object.id]);
    expect(rows).to.have.length(1);
    const { rows: outbox } = await api.sql.query(
      "SELECT 1 FROM outbox WHERE event_type = 'deployment.applied' AND payload->'data'->>'deployment_object_id' = $1",
      [object.id],
    );
    expect(outbox).to.have.length(1);
    // An SDK (User-Agent) reporting twice still gets two events, as in Brokkr.
    expect((await api.admin.as(pak).post(`/agents/${agent.id}/events`, event)).status).to.equal(201);
    const { rows: after } = await api.sql.query('SELECT id FROM agent_events WHERE deployment_object_id = $1', [object.id]);
    expect(after).to.have.length(2);
  });
});

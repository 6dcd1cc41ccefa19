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

// An origin the default CORS settings allow: such a request goes through express (CORS headers).
const ORIGIN = 'http://localhost:3001';
const YAML = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lane\ndata:\n  a: "1"\n';

/** What must not depend on the lane: status, content type, error code and message, the body's fields. */
function shape(res: ApiResponse) {
  const body = res.body as Record<string, unknown> | undefined;
  const isError = typeof body?.code === 'string';
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    body: isError ? body : body && typeof body === 'object' ? Object.keys(body).sort() : res.text,
  };
}

/**
 * The hot writes are served by the direct lane (http/direct-lane.ts) unless a request carries an
 * Origin, which sends it through express. Each case runs both ways and must answer the same; the
 * ETag (which only express adds) shows which way each one went.
 */
describe('direct lane: the hot writes answer exactly as through express', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let generator: ApiClient;
  let stackId: string;
  let agent: { id: string; client: ApiClient };
  let objectId: string;

  before(async () => {
    api = await startTestApi(infra);
    const created = await createGenerator(api.admin);
    generator = created.client;
    stackId = (await createStack(generator, { generator_id: created.generator.id })).id;
    const a = await createAgent(api.admin, { generator_ids: [created.generator.id] });
    agent = { id: a.agent.id, client: a.client };
    // Agents report only on objects they are served (agent-reports.test.ts).
    expect((await generator.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stackId })).status).to.equal(201);
    const object = await generator.post<{ id: string }>(`/stacks/${stackId}/deployment-objects`, { yaml_content: YAML });
    expect(object.status, object.text).to.equal(201);
    objectId = object.body.id;
  });

  after(async () => {
    await api?.stop();
  });

  /** `ownEtag`: the route sets its ETag itself (target state), so the ETag cannot tell the lanes apart. */
  async function both(send: (headers: Record<string, string>) => Promise<ApiResponse>, ownEtag = false): Promise<ApiResponse> {
    const direct = await send({});
    const viaExpress = await send({ origin: ORIGIN });
    expect(viaExpress.headers.get('access-control-allow-origin'), 'the Origin request went through express').to.equal(ORIGIN);
    if (ownEtag) expect(direct.headers.get('etag')).to.equal(viaExpress.headers.get('etag'));
    else if (direct.body !== undefined && direct.text !== '') {
      expect(direct.headers.get('etag'), 'served by the direct lane').to.equal(null);
      expect(viaExpress.headers.get('etag'), 'served by express').to.not.equal(null);
    }
    expect(shape(direct)).to.deep.equal(shape(viaExpress));
    return direct;
  }

  it('creates deployment objects (JSON envelope and raw YAML) and refuses bad ones the same way', async () => {
    const post =
      (body: unknown, stack = stackId, client = generator) =>
      (headers: Record<string, string>) =>
        client.post(`/stacks/${stack}/deployment-objects`, body, { headers });
    expect((await both(post({ yaml_content: YAML }))).status).to.equal(201);
    const raw = (headers: Record<string, string>) =>
      generator.request('POST', `/stacks/${stackId}/deployment-objects`, { raw: YAML, contentType: 'application/yaml', headers });
    expect((await both(raw)).status).to.equal(201);
    expect((await both(post({ yaml_content: 'a: [' }))).body).to.include({ code: 'invalid_deployment_object' });
    expect((await both(post({ yaml_content: YAML }, '00000000-0000-4000-8000-000000000000'))).body).to.include({
      code: 'stack_not_found',
    });
    expect((await both(post({ yaml_content: YAML }, 'not-a-uuid'))).body).to.include({ code: 'invalid_id' });
    expect((await both(post({ yaml_content: YAML }, stackId, agent.client))).status).to.equal(403);
    expect((await both(post({ yaml_content: YAML }, stackId, generator.as('brokkr_BRnope_nope')))).body).to.include({
      code: 'unauthorized',
    });
  });

  it('records agent events, heartbeats and health reports, and refuses mismatches the same way', async () => {
    const event = (agentId: string) => ({ agent_id: agentId, deployment_object_id: objectId, event_type: 'DEPLOY', status: 'SUCCESS' });
    const postEvent = (body: unknown) => (headers: Record<string, string>) =>
      agent.client.post(`/agents/${agent.id}/events`, body, { headers });
    expect((await both(postEvent(event(agent.id)))).status).to.equal(201);
    expect((await both(postEvent(event('00000000-0000-4000-8000-000000000000')))).status).to.equal(400);
    expect((await both(postEvent({ agent_id: agent.id }))).body).to.include({ code: 'invalid_request_body' });
    const heartbeat = (headers: Record<string, string>) =>
      agent.client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, k8s_api_latency_ms: 3 }, { headers });
    expect((await both(heartbeat)).status).to.equal(204);
    const health = (headers: Record<string, string>) =>
      agent.client.patch(
        `/agents/${agent.id}/health-status`,
        { deployment_objects: [{ id: objectId, status: 'healthy', checked_at: '2026-01-01T00:00:00Z' }] },
        { headers },
      );
    expect((await both(health)).status).to.equal(200);
  });

  it('serves the target state (200, then 304 for the same ETag) the same way', async () => {
    const get = (headers: Record<string, string>) => agent.client.get(`/agents/${agent.id}/target-state`, { headers });
    const first = await both(get, true);
    expect(first.status).to.equal(200);
    const etag = first.headers.get('etag')!;
    const again = await both((headers) => get({ ...headers, 'if-none-match': etag }), true);
    expect(again.status).to.equal(304);
    expect(
      (await both((headers) => agent.client.get(`/agents/${agent.id}/target-state`, { headers, query: { wait: 'x' } }))).body,
    ).to.include({
      code: 'invalid_query',
    });
  });

  it('leaves other paths to express: a trailing slash is not the route', async () => {
    const res = await agent.client.post(`/agents/${agent.id}/heartbeat/`, {});
    expect(res.status).to.equal(404);
    expect(res.body).to.include({ code: 'not_found' });
  });

  it('labels its requests in the metrics like express does', async () => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const created = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('brokkr_http_requests_total{') &&
          l.includes('endpoint="/api/v1/stacks/:id/deployment-objects"') &&
          l.includes('status="201"'),
      );
    expect(created, 'a 201 counted under the route template').to.be.a('string');
    expect(Number(created!.split(' ').pop())).to.be.at.least(4);
  });
});

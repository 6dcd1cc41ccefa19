import { randomUUID } from 'node:crypto';
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
 * Real error responses, one request per kind of refusal, each checked against the document the
 * api serves: the status is declared for that operation and its description names the code.
 * (openapi-responses.unit.test.ts checks the document alone; openapi-fuzz.test.ts fuzzes it.)
 */

interface Operation {
  responses: Record<string, { description: string }>;
}

interface Sample {
  /** `METHOD /template` relative to /api/v1. */
  op: string;
  status: number;
  code: string;
  send(): Promise<ApiResponse>;
}

describe('OpenAPI document: real error responses are declared', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let paths: Record<string, Record<string, Operation>>;
  const samples: Sample[] = [];

  before(async () => {
    api = await startTestApi(infra);
    paths = (await api.anonymous.get('//docs/openapi.json')).body.paths;
    samples.push(...(await buildSamples(api)));
  });

  after(async () => {
    await api?.stop();
  });

  it('answers each sample with its expected status and code, declared for its operation', async () => {
    const problems: string[] = [];
    for (const sample of samples) {
      const res = await sample.send();
      const [method, template] = sample.op.split(' ') as [string, string];
      const declared = paths[`/api/v1${template}`]?.[method.toLowerCase()]?.responses[String(res.status)];
      if (res.status !== sample.status || res.body?.code !== sample.code) {
        problems.push(`${sample.op}: expected ${sample.status} ${sample.code}, got ${res.status} ${res.text.slice(0, 200)}`);
      } else if (!declared) {
        problems.push(`${sample.op}: ${res.status} is not declared`);
      } else if (!declared.description.includes(`\`${sample.code}\``)) {
        problems.push(`${sample.op}: ${res.status} does not name \`${sample.code}\` (${declared.description})`);
      }
    }
    expect(problems).to.deep.equal([]);
    expect(samples.length).to.be.greaterThan(20);
  });
});

async function buildSamples(api: TestApi): Promise<Sample[]> {
  const { admin, anonymous } = api;
  const generator = await createGenerator(admin);
  const other = await createGenerator(admin);
  const agent = await createAgent(admin, { generator_ids: [generator.generator.id] });
  const stranger = await createAgent(admin);
  const stack = await createStack(generator.client, { generator_id: generator.generator.id });
  const webhook = (await admin.post('/webhooks', { name: 'samples', url: 'http://127.0.0.1:9/x', event_types: ['*'] })).body.id as string;
  const { rows } = await api.sql.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload) VALUES ($1, 'stack.created', gen_random_uuid(), '{}') RETURNING id`,
    [webhook],
  );
  const pending = rows[0]!.id;
  const gen = generator.client;
  const ag: ApiClient = agent.client;
  const agentId = agent.agent.id;
  const missing = randomUUID();
  const sample = (op: string, status: number, code: string, send: () => Promise<ApiResponse>): Sample => ({ op, status, code, send });

  return [
    sample('GET /stacks', 401, 'unauthorized', () => anonymous.get('/stacks')),
    sample('POST /auth/pak', 401, 'unauthorized', () => anonymous.post('/auth/pak', undefined, { pak: 'brokkr_BRnope_nope' })),
    sample('GET /generators', 403, 'admin_required', () => gen.get('/generators')),
    sample('GET /agents', 403, 'generator_required', () => ag.get('/agents')),
    sample('GET /agents/{id}', 403, 'agent_pak_mismatch', () => stranger.client.get(`/agents/${agentId}`)),
    sample('GET /agents/{id}', 404, 'agent_not_found', () => admin.get(`/agents/${missing}`)),
    sample('GET /agents/{id}', 400, 'invalid_id', () => admin.get('/agents/not-a-uuid')),
    sample('GET /agents/', 400, 'name_and_cluster_required', () => admin.get('/agents/')),
    sample('GET /stacks/{id}', 403, 'stack_not_owned', () => other.client.get(`/stacks/${stack.id}`)),
    sample('POST /stacks/{id}/labels', 404, 'stack_not_found', () => admin.post(`/stacks/${missing}/labels`, 'x')),
    sample('POST /stacks/{id}/labels', 400, 'invalid_label', () => admin.post(`/stacks/${stack.id}/labels`, 'has space')),
    sample('POST /stacks', 400, 'invalid_json', () =>
      admin.request('POST', '/stacks', { raw: '{"name": ', contentType: 'application/json' }),
    ),
    sample('POST /stacks', 415, 'unsupported_media_type', () =>
      admin.request('POST', '/stacks', { raw: 'name=x', contentType: 'text/plain' }),
    ),
    sample('POST /stacks', 422, 'invalid_request_body', () => admin.post('/stacks', { name: 42 })),
    sample('POST /stacks', 422, 'foreign_key_violation', () => admin.post('/stacks', { name: 'orphan', generator_id: missing })),
    sample('POST /stacks', 409, 'unique_violation', () =>
      admin.post('/stacks', { name: stack.name, generator_id: generator.generator.id }),
    ),
    sample('POST /generators', 413, 'payload_too_large', () =>
      admin.post('/generators', { name: 'big', description: 'y'.repeat(3 * 1024 * 1024) }),
    ),
    sample('POST /generators', 409, 'unique_violation', () => admin.post('/generators', { name: generator.generator.name })),
    sample('POST /generators/{id}/register', 409, 'already_registered', () => ag.post(`/generators/${generator.generator.id}/register`)),
    sample('POST /agents/{id}/targets', 403, 'target_create_denied', () =>
      ag.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stack.id }),
    ),
    sample('POST /agents/{id}/events', 400, 'agent_id_mismatch', () =>
      ag.post(`/agents/${agentId}/events`, { agent_id: missing, deployment_object_id: missing, event_type: 'DEPLOY', status: 'SUCCESS' }),
    ),
    sample('POST /agents/{id}/events', 422, 'foreign_key_violation', () =>
      ag.post(`/agents/${agentId}/events`, { agent_id: agentId, deployment_object_id: missing, event_type: 'DEPLOY', status: 'SUCCESS' }),
    ),
    sample('DELETE /agents/{id}/labels/{label}', 400, 'invalid_input', () => admin.delete(`/agents/${agentId}/labels/nul%00byte`)),
    sample('PATCH /agents/{id}/health-status', 422, 'invalid_health_record', () =>
      ag.patch(`/agents/${agentId}/health-status`, {
        deployment_objects: [{ id: missing, status: 'weird', checked_at: new Date().toISOString() }],
      }),
    ),
    sample('GET /admin/audit-logs', 400, 'invalid_query', () => admin.get('/admin/audit-logs', { query: { limit: 'many' } })),
    sample('GET /agent-events/{id}', 404, 'agent_event_not_found', () => admin.get(`/agent-events/${missing}`)),
    sample('POST /webhooks', 400, 'invalid_url_scheme', () =>
      admin.post('/webhooks', { name: 'x', url: 'ftp://example.com', event_types: ['*'] }),
    ),
    sample('POST /webhooks', 422, 'unsupported_field', () =>
      admin.post('/webhooks', { name: 'x', url: 'http://e.com', event_types: ['*'], validate: true }),
    ),
    sample('GET /webhooks/{id}', 404, 'webhook_not_found', () => admin.get(`/webhooks/${missing}`)),
    sample('POST /webhook-deliveries/{id}/redeliver', 409, 'delivery_not_finished', () =>
      admin.post(`/webhook-deliveries/${pending}/redeliver`),
    ),
    sample('POST /webhook-deliveries/{id}/result', 403, 'agent_pak_required', () =>
      admin.post(`/webhook-deliveries/${pending}/result`, { success: true }),
    ),
  ];
}

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  RFC3339_Z,
  adminGeneratorId,
  auditMessages,
  createAgent,
  createGenerator,
  createStack,
  readStream,
  startTestApi,
  uniqueName,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

const AGENT_FIELDS = [
  'id',
  'created_at',
  'updated_at',
  'deleted_at',
  'name',
  'cluster_name',
  'last_heartbeat',
  'status',
  'k8s_reachable',
  'k8s_api_latency_ms',
  'k8s_reported_at',
];
const EVENT_FIELDS = [
  'id',
  'created_at',
  'updated_at',
  'deleted_at',
  'agent_id',
  'deployment_object_id',
  'event_type',
  'status',
  'message',
];

describe('api agents', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let adminGen: string;

  async function events(type: string): Promise<EventEnvelope[]> {
    const all = await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS');
    return all.filter((m) => m.data.event_type === type).map((m) => m.data);
  }

  /** A stack of the admin-generator with one deployment object; returns both ids. */
  async function stackWithObject(): Promise<{ stackId: string; objectId: string }> {
    const stack = await createStack(api.admin, { generator_id: adminGen });
    const res = await api.admin.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\nmetadata:\n  name: x\n' });
    expect(res.status, res.text).to.equal(201);
    return { stackId: stack.id, objectId: res.body.id };
  }

  function expectError(res: { status: number; body: { code?: string }; text: string }, status: number, code: string): void {
    expect(res.status, res.text).to.equal(status);
    expect(res.body.code, res.text).to.equal(code);
  }

  before(async () => {
    api = await startTestApi(infra);
    adminGen = await adminGeneratorId(api.admin);
  });

  after(async () => {
    await api?.stop();
  });

  describe('POST /agents', () => {
    it('creates an INACTIVE agent with a working PAK, registered with __system__ and the given generators', async () => {
      const gen = await createGenerator(api.admin);
      const name = uniqueName('agent');
      const res = await api.admin.post('/agents', { name, cluster_name: 'c1', generator_ids: [gen.generator.id] });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.have.all.keys('agent', 'initial_pak');
      expect(res.body.agent).to.have.all.keys(...AGENT_FIELDS);
      expect(res.body.agent).to.include({ name, cluster_name: 'c1', status: 'INACTIVE', deleted_at: null, last_heartbeat: null });
      expect(res.body.agent.created_at).to.match(RFC3339_Z);
      expect(res.body.initial_pak).to.match(/^brokkr_BR[1-9A-HJ-NP-Za-km-z]{6}_[1-9A-HJ-NP-Za-km-z]+$/);

      const me = await api.admin.as(res.body.initial_pak).post('/auth/pak');
      expect(me.body).to.deep.equal({ admin: false, agent: res.body.agent.id, generator: null, readonly: false });

      const regs = await api.admin.get(`/agents/${res.body.agent.id}/registrations`);
      expect(regs.status).to.equal(200);
      const { rows } = await api.sql.query<{ id: string }>(`SELECT id FROM generators WHERE name = '__system__'`);
      expect(regs.body.map((r: { generator_id: string }) => r.generator_id)).to.have.members([rows[0]!.id, gen.generator.id]);
      expect(regs.body[0]).to.have.all.keys('id', 'agent_id', 'generator_id', 'registered_at', 'grant');

      const registered = await eventually(async () =>
        (await events('agent.registered')).find((e) => e.data.agent_id === res.body.agent.id),
      );
      expect(registered.data).to.deep.equal({
        agent_id: res.body.agent.id,
        name,
        cluster_name: 'c1',
        status: 'INACTIVE',
        created_at: res.body.agent.created_at,
      });
      const created = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'agent.created')).find((a) => a.resource_id === res.body.agent.id),
      );
      expect(created).to.include({ actor_type: 'admin', resource_type: 'agent' });
      expect(created.details).to.deep.equal({ name, cluster_name: 'c1' });
      const pak = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'pak.created')).find((a) => a.resource_id === res.body.agent.id),
      );
      expect(pak).to.include({ resource_type: 'pak' });
      expect(pak.details).to.deep.equal({ entity: 'agent', name });
    });

    it('checks generator ids first (400 invalid_generator_id), then blank names (400 invalid_agent)', async () => {
      expectError(
        await api.admin.post('/agents', { name: ' ', cluster_name: 'c', generator_ids: [randomUUID()] }),
        400,
        'invalid_generator_id',
      );
      expectError(await api.admin.post('/agents', { name: '  ', cluster_name: 'c' }), 400, 'invalid_agent');
      expectError(await api.admin.post('/agents', { name: 'a', cluster_name: '' }), 400, 'invalid_agent');
    });

    it('rejects a duplicate live (name, cluster) with 409 unique_agent_cluster, but allows reuse after deletion', async () => {
      const { agent } = await createAgent(api.admin, { cluster_name: 'dup' });
      const dup = await api.admin.post('/agents', { name: agent.name, cluster_name: 'dup' });
      expectError(dup, 409, 'unique_violation');
      expect(dup.body.details.constraint).to.equal('unique_agent_cluster');
      expect((await api.admin.delete(`/agents/${agent.id}`)).status).to.equal(204);
      expect((await api.admin.post('/agents', { name: agent.name, cluster_name: 'dup' })).status).to.equal(201);
    });

    it('is admin only and validates the body', async () => {
      const gen = await createGenerator(api.admin);
      expectError(await gen.client.post('/agents', { name: 'x', cluster_name: 'y' }), 403, 'admin_required');
      expectError(await api.admin.post('/agents', { name: 'x' }), 422, 'invalid_request_body');
      expectError(await api.admin.post('/agents', { name: 'x'.repeat(300), cluster_name: 'y' }), 400, 'invalid_input');
    });
  });

  describe('GET /agents', () => {
    it('lists every live agent for an admin and only its registered agents for a generator', async () => {
      const gen = await createGenerator(api.admin);
      const mine = await createAgent(api.admin, { generator_ids: [gen.generator.id] });
      const other = await createAgent(api.admin);
      const all = await api.admin.get('/agents');
      expect(all.status).to.equal(200);
      expect(all.body.map((a: { id: string }) => a.id)).to.include.members([mine.agent.id, other.agent.id]);
      expect(all.body[0]).to.have.all.keys(...AGENT_FIELDS);
      const tenant = await gen.client.get('/agents');
      expect(tenant.status).to.equal(200);
      expect(tenant.body.map((a: { id: string }) => a.id)).to.deep.equal([mine.agent.id]);
    });

    it('refuses agents (generator_required) and the system generator (system_generator_not_a_tenant)', async () => {
      const { client } = await createAgent(api.admin);
      expectError(await client.get('/agents'), 403, 'generator_required');
      const gen = await createGenerator(api.admin);
      await api.sql.query('UPDATE generators SET is_system = true WHERE id = $1', [gen.generator.id]);
      expectError(await gen.client.get('/agents'), 403, 'system_generator_not_a_tenant');
    });
  });

  describe('GET /agents/ (search)', () => {
    it('finds an agent by name and cluster for an admin or the agent itself', async () => {
      const { agent, client } = await createAgent(api.admin, { cluster_name: 'search' });
      const query = { name: agent.name, cluster_name: 'search' };
      const byAdmin = await api.admin.get('/agents/', { query });
      expect(byAdmin.status, byAdmin.text).to.equal(200);
      expect(byAdmin.body).to.have.all.keys(...AGENT_FIELDS);
      expect(byAdmin.body.id).to.equal(agent.id);
      expect((await client.get('/agents/', { query })).body.id).to.equal(agent.id);
    });

    it('needs both parameters, looks up before authorizing, and refuses other agents', async () => {
      const { agent } = await createAgent(api.admin, { cluster_name: 'search' });
      const stranger = await createAgent(api.admin);
      expectError(await api.admin.get('/agents/', { query: { name: agent.name } }), 400, 'name_and_cluster_required');
      expectError(await stranger.client.get('/agents/', { query: { name: 'nope', cluster_name: 'nope' } }), 404, 'agent_not_found');
      expectError(
        await stranger.client.get('/agents/', { query: { name: agent.name, cluster_name: 'search' } }),
        403,
        'agent_pak_mismatch',
      );
    });
  });

  describe('GET/PUT/DELETE /agents/{id}', () => {
    it('gets an agent (403 before 404)', async () => {
      const { agent, client } = await createAgent(api.admin);
      const res = await client.get(`/agents/${agent.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...AGENT_FIELDS);
      expect((await client.get(`/agents/${agent.id.toUpperCase()}`)).status, 'upper-case UUID').to.equal(200);
      expectError(await client.get(`/agents/${randomUUID()}`), 403, 'agent_pak_mismatch');
      expectError(await api.admin.get(`/agents/${randomUUID()}`), 404, 'agent_not_found');
      expectError(await api.admin.get('/agents/not-a-uuid'), 400, 'invalid_id');
    });

    it('applies only string name, cluster_name and status, and audits the real actor', async () => {
      const { agent, client } = await createAgent(api.admin);
      const res = await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE', name: 42, cluster_name: 'moved', extra: true });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ status: 'ACTIVE', name: agent.name, cluster_name: 'moved' });
      const self = await client.put(`/agents/${agent.id}`, { cluster_name: 'moved-again', status: 'ACTIVE' });
      expect(self.body).to.include({ cluster_name: 'moved-again', status: 'ACTIVE' });
      const audit = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'agent.updated')).find((a) => a.resource_id === agent.id && a.actor_type === 'agent'),
      );
      expect(audit.actor_id).to.equal(agent.id);
      expect(audit.details).to.deep.equal({ name: agent.name, cluster_name: 'moved-again', status: 'ACTIVE' });
    });

    it('rejects unknown statuses and blank names (400 invalid_agent), unknown agents (404), collisions (409)', async () => {
      const a = await createAgent(api.admin, { cluster_name: 'put' });
      const b = await createAgent(api.admin, { cluster_name: 'put' });
      expectError(await api.admin.put(`/agents/${a.agent.id}`, { status: 'active' }), 400, 'invalid_agent');
      expectError(await api.admin.put(`/agents/${a.agent.id}`, { name: ' ' }), 400, 'invalid_agent');
      expectError(await api.admin.put(`/agents/${randomUUID()}`, { status: 'ACTIVE' }), 404, 'agent_not_found');
      expectError(await api.admin.put(`/agents/${a.agent.id}`, { name: b.agent.name }), 409, 'unique_violation');
      expectError(await api.admin.put(`/agents/${a.agent.id}`, [1]), 422, 'invalid_request_body');
      expectError(await b.client.put(`/agents/${a.agent.id}`, { status: 'ACTIVE' }), 403, 'agent_pak_mismatch');
    });

    it('soft-deletes (204 also when unknown): the PAK stops working at once, the event and audit are recorded', async () => {
      const { agent, client } = await createAgent(api.admin);
      expect((await client.post('/auth/pak')).status).to.equal(200);
      expect((await api.admin.delete(`/agents/${agent.id}`)).status).to.equal(204);
      expectError(await client.post('/auth/pak'), 401, 'unauthorized');
      expectError(await api.admin.get(`/agents/${agent.id}`), 404, 'agent_not_found');
      expect((await api.admin.delete(`/agents/${agent.id}`)).status).to.equal(204);
      expect((await api.admin.delete(`/agents/${randomUUID()}`)).status).to.equal(204);
      const gone = await eventually(async () => (await events('agent.deregistered')).find((e) => e.data.agent_id === agent.id));
      expect(gone.data).to.have.all.keys('agent_id', 'deleted_at');
      expect(gone.data.deleted_at).to.match(RFC3339_Z);
      await eventually(async () => (await auditMessages(api.natsUrl, 'agent.deleted')).some((a) => a.resource_id === agent.id));
      expect((await auditMessages(api.natsUrl, 'agent.deleted')).filter((a) => a.resource_id === agent.id)).to.have.length(1);
      expectError(await (await createAgent(api.admin)).client.delete(`/agents/${agent.id}`), 403, 'admin_required');
    });
  });

  describe('labels and annotations', () => {
    it('adds, lists and removes labels (admin writes, the agent reads)', async () => {
      const { agent, client } = await createAgent(api.admin);
      const add = await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'env=prod' });
      expect(add.status, add.text).to.equal(201);
      expect(add.body).to.have.all.keys('id', 'agent_id', 'label');
      expect(add.body).to.include({ agent_id: agent.id, label: 'env=prod' });
      const list = await client.get(`/agents/${agent.id}/labels`);
      expect(list.body).to.deep.equal([add.body]);
      const dup = await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'env=prod' });
      expectError(dup, 409, 'unique_violation');
      expect(dup.body.details.constraint).to.equal('agent_labels_agent_id_label_key');
      expect((await api.admin.delete(`/agents/${agent.id}/labels/${encodeURIComponent('env=prod')}`)).status).to.equal(204);
      expectError(await api.admin.delete(`/agents/${agent.id}/labels/env=prod`), 404, 'agent_label_not_found');
      expect((await client.get(`/agents/${agent.id}/labels`)).body).to.deep.equal([]);
    });

    it('rejects label mismatches, agents writing, overlong labels and unknown agents', async () => {
      const { agent, client } = await createAgent(api.admin);
      expectError(await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: randomUUID(), label: 'x' }), 400, 'agent_id_mismatch');
      expectError(await client.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'x' }), 403, 'admin_required');
      expectError(await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'x'.repeat(65) }), 400, 'invalid_label');
      const unknown = randomUUID();
      expectError(await api.admin.post(`/agents/${unknown}/labels`, { agent_id: unknown, label: 'x' }), 422, 'foreign_key_violation');
    });

    it('adds, lists and removes annotations (one value per key)', async () => {
      const { agent, client } = await createAgent(api.admin);
      const add = await api.admin.post(`/agents/${agent.id}/annotations`, { agent_id: agent.id, key: 'region', value: 'eu' });
      expect(add.status, add.text).to.equal(201);
      expect(add.body).to.have.all.keys('id', 'agent_id', 'key', 'value');
      expect((await client.get(`/agents/${agent.id}/annotations`)).body).to.deep.equal([add.body]);
      const dup = await api.admin.post(`/agents/${agent.id}/annotations`, { agent_id: agent.id, key: 'region', value: 'us' });
      expectError(dup, 409, 'unique_violation');
      expectError(
        await api.admin.post(`/agents/${agent.id}/annotations`, { agent_id: randomUUID(), key: 'k', value: 'v' }),
        400,
        'agent_id_mismatch',
      );
      expect((await api.admin.delete(`/agents/${agent.id}/annotations/region`)).status).to.equal(204);
      expectError(await api.admin.delete(`/agents/${agent.id}/annotations/region`), 404, 'agent_annotation_not_found');
    });
  });

  describe('targets', () => {
    let owner: { id: string; client: ApiClient };
    let stranger: ApiClient;

    before(async () => {
      const gen = await createGenerator(api.admin);
      owner = { id: gen.generator.id, client: gen.client };
      stranger = (await createGenerator(api.admin)).client;
    });

    it('lets the owning generator and the admin target registered agents', async () => {
      const { agent, client } = await createAgent(api.admin, { generator_ids: [owner.id] });
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const add = await owner.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      expect(add.status, add.text).to.equal(201);
      expect(add.body).to.have.all.keys('id', 'agent_id', 'stack_id');
      expect((await client.get(`/agents/${agent.id}/targets`)).body).to.deep.equal([add.body]);
      const dup = await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      expectError(dup, 409, 'unique_violation');
      expect(dup.body.details.constraint).to.equal('unique_agent_stack');
      expect((await api.admin.delete(`/agents/${agent.id}/targets/${stack.id}`)).status).to.equal(204);
      expectError(await owner.client.delete(`/agents/${agent.id}/targets/${stack.id}`), 404, 'agent_target_not_found');
    });

    it('checks in Brokkr order: stack, generator, agent PAK, registration, agent id', async () => {
      const registered = await createAgent(api.admin, { generator_ids: [owner.id] });
      const unregistered = await createAgent(api.admin);
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const body = (agentId: string, stackId = stack.id) => ({ agent_id: agentId, stack_id: stackId });
      const id = registered.agent.id;
      // Each case also fails every later check, so the code proves the order.
      expectError(
        await stranger.post(`/agents/${unregistered.agent.id}/targets`, body(randomUUID(), randomUUID())),
        404,
        'stack_not_found',
      );
      expectError(await stranger.post(`/agents/${unregistered.agent.id}/targets`, body(randomUUID())), 403, 'target_generator_mismatch');
      expectError(
        await registered.client.post(`/agents/${unregistered.agent.id}/targets`, body(randomUUID())),
        403,
        'target_create_denied',
      );
      expectError(await api.admin.post(`/agents/${unregistered.agent.id}/targets`, body(randomUUID())), 403, 'agent_not_registered');
      expectError(await api.admin.post(`/agents/${id}/targets`, body(randomUUID())), 400, 'agent_id_mismatch');
      expectError(await registered.client.delete(`/agents/${id}/targets/${stack.id}`), 403, 'target_create_denied');
      expectError(await api.admin.delete(`/agents/${unregistered.agent.id}/targets/${stack.id}`), 403, 'agent_not_registered');
    });
  });

  describe('heartbeat', () => {
    it('records the heartbeat and the Kubernetes report; ignores unparsable bodies; never changes status', async () => {
      const { agent, client } = await createAgent(api.admin);
      expect((await client.post(`/agents/${agent.id}/heartbeat`)).status).to.equal(204);
      let row = (await api.admin.get(`/agents/${agent.id}`)).body;
      expect(row.last_heartbeat).to.match(RFC3339_Z);
      expect(row).to.include({ k8s_reachable: null, status: 'INACTIVE' });

      expect((await client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, k8s_api_latency_ms: 12 })).status).to.equal(204);
      row = (await api.admin.get(`/agents/${agent.id}`)).body;
      expect(row).to.include({ k8s_reachable: true, k8s_api_latency_ms: 12, status: 'INACTIVE' });
      expect(row.k8s_reported_at).to.match(RFC3339_Z);

      const garbage = await client.request('POST', `/agents/${agent.id}/heartbeat`, { raw: '{not json', contentType: 'application/json' });
      expect(garbage.status).to.equal(204);
      expect((await client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: false })).status).to.equal(204);
      row = (await api.admin.get(`/agents/${agent.id}`)).body;
      expect(row).to.include({ k8s_reachable: false, k8s_api_latency_ms: null });
    });

    it('is for the agent itself only (an admin gets 403 agent_pak_mismatch)', async () => {
      const { agent } = await createAgent(api.admin);
      expectError(await api.admin.post(`/agents/${agent.id}/heartbeat`), 403, 'agent_pak_mismatch');
    });
  });

  describe('events', () => {
    it('records SUCCESS as deployment.applied and anything else as deployment.failed', async () => {
      const { agent, client } = await createAgent(api.admin);
      const { stackId, objectId } = await stackWithObject();
      // Agents report only on objects they are served (agent-reports.test.ts).
      await api.sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [agent.id, stackId]);
      const ok = await client.post(`/agents/${agent.id}/events`, {
        agent_id: agent.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status: 'success',
        message: 'applied',
      });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body).to.have.all.keys(...EVENT_FIELDS);
      expect(ok.body).to.include({
        agent_id: agent.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status: 'success',
        message: 'applied',
      });
      const bad = await client.post(`/agents/${agent.id}/events`, {
        agent_id: agent.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status: 'FAILURE',
      });
      expect(bad.status).to.equal(201);
      expect(bad.body.message).to.equal(null);

      const applied = await eventually(async () => (await events('deployment.applied')).find((e) => e.data.agent_event_id === ok.body.id));
      expect(applied.data).to.deep.equal({
        agent_event_id: ok.body.id,
        agent_id: agent.id,
        deployment_object_id: objectId,
        stack_id: stackId,
        event_type: 'DEPLOY',
        status: 'success',
        message: 'applied',
        created_at: ok.body.created_at,
      });
      await eventually(async () => (await events('deployment.failed')).some((e) => e.data.agent_event_id === bad.body.id));

      const list = await client.get(`/agents/${agent.id}/events`);
      expect(list.body.map((e: { id: string }) => e.id)).to.deep.equal([bad.body.id, ok.body.id]);
      const global = await api.admin.get('/agent-events');
      expect(global.status).to.equal(200);
      expect(global.body.map((e: { id: string }) => e.id)).to.include.members([ok.body.id, bad.body.id]);
      const one = await api.admin.get(`/agent-events/${ok.body.id}`);
      expect(one.body).to.deep.equal(ok.body);
    });

    it('rejects mismatched ids (400), unknown objects (422), overlong strings (400) and other callers (403)', async () => {
      const { agent, client } = await createAgent(api.admin);
      const other = await createAgent(api.admin);
      const { objectId } = await stackWithObject();
      const body = { agent_id: agent.id, deployment_object_id: objectId, event_type: 'DEPLOY', status: 'SUCCESS' };
      expectError(await client.post(`/agents/${agent.id}/events`, { ...body, agent_id: other.agent.id }), 400, 'agent_id_mismatch');
      expectError(
        await client.post(`/agents/${agent.id}/events`, { ...body, deployment_object_id: randomUUID() }),
        422,
        'foreign_key_violation',
      );
      expectError(await client.post(`/agents/${agent.id}/events`, { ...body, status: 'S'.repeat(11) }), 400, 'invalid_input');
      expectError(await client.post(`/agents/${agent.id}/events`, { ...body, event_type: 'E'.repeat(51) }), 400, 'invalid_input');
      expectError(await other.client.post(`/agents/${agent.id}/events`, body), 403, 'agent_pak_mismatch');
      expectError(await other.client.get(`/agents/${agent.id}/events`), 403, 'agent_pak_mismatch');
    });

    it('keeps /agent-events admin only and answers unknown ids with 404 agent_event_not_found', async () => {
      const { client } = await createAgent(api.admin);
      expectError(await client.get('/agent-events'), 403, 'admin_required');
      expectError(await api.admin.get(`/agent-events/${randomUUID()}`), 404, 'agent_event_not_found');
    });
  });

  describe('rotate-pak, registrations, stacks', () => {
    it('rotates the PAK: the new one works, the old one stops at once, the audit names the real actor', async () => {
      const { agent, client, initial_pak } = await createAgent(api.admin);
      const res = await client.post(`/agents/${agent.id}/rotate-pak`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys('agent', 'pak');
      expect(res.body.agent).to.have.all.keys(...AGENT_FIELDS);
      expect(res.body.pak).to.not.equal(initial_pak);
      expectError(await client.post('/auth/pak'), 401, 'unauthorized');
      expect((await client.as(res.body.pak).post('/auth/pak')).body.agent).to.equal(agent.id);
      const audit = await eventually(async () => (await auditMessages(api.natsUrl, 'pak.rotated')).find((a) => a.resource_id === agent.id));
      expect(audit).to.include({ actor_type: 'agent', actor_id: agent.id, resource_type: 'agent' });
      expect(audit.details).to.deep.equal({ agent_name: agent.name });
      expectError(await api.admin.post(`/agents/${randomUUID()}/rotate-pak`), 404, 'agent_not_found');
    });

    it('lists registrations (404 for unknown agents) and associated stacks sorted by id', async () => {
      const gen = await createGenerator(api.admin);
      const { agent, client } = await createAgent(api.admin, { generator_ids: [gen.generator.id] });
      expectError(await api.admin.get(`/agents/${randomUUID()}/registrations`), 404, 'agent_not_found');
      const stacks = [];
      for (let i = 0; i < 3; i++) {
        const stack = await createStack(gen.client, { generator_id: gen.generator.id });
        expect((await gen.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
        stacks.push(stack);
      }
      const res = await client.get(`/agents/${agent.id}/stacks`);
      expect(res.status).to.equal(200);
      expect(res.body.map((s: { id: string }) => s.id)).to.deep.equal(stacks.map((s) => s.id).sort());
      expect(res.body[0]).to.have.all.keys('id', 'created_at', 'updated_at', 'deleted_at', 'name', 'description', 'generator_id');
    });
  });
});

import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  RFC3339_Z,
  adminGeneratorId,
  auditMessages,
  collectCore,
  createGenerator,
  createStack,
  insertAgentRow,
  readStream,
  startTestApi,
  uniqueName,
  type AgentRowOptions,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

const STACK_FIELDS = ['created_at', 'deleted_at', 'description', 'generator_id', 'id', 'name', 'updated_at'];

describe('api stacks, labels and annotations', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let adminGen: string;
  let owner: { id: string; client: ApiClient };

  /** An agent row with a PAK (agents are set up in SQL: this file tests the stack endpoints). */
  async function insertAgent(opts: AgentRowOptions = {}) {
    const { id, pak } = await insertAgentRow(api.sql, { status: 'ACTIVE', ...opts });
    return { id, client: api.admin.as(pak) };
  }

  async function events(type: string): Promise<EventEnvelope[]> {
    const all = await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS');
    return all.filter((m) => m.data.event_type === type).map((m) => m.data);
  }

  before(async () => {
    api = await startTestApi(infra);
    adminGen = await adminGeneratorId(api.admin);
    const gen = await createGenerator(api.admin);
    owner = { id: gen.generator.id, client: gen.client };
  });

  after(async () => {
    await api?.stop();
  });

  describe('create, read, list', () => {
    it('creates a stack as admin for any generator: 201 with the Stack shape', async () => {
      const name = uniqueName('stack');
      const res = await api.admin.post('/stacks', { name, description: 'first', generator_id: owner.id });
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(STACK_FIELDS);
      expect(res.body).to.include({ name, description: 'first', generator_id: owner.id, deleted_at: null });
      expect(res.body.created_at).to.match(RFC3339_Z);
      expect(res.body.updated_at).to.match(RFC3339_Z);

      const got = await api.admin.get(`/stacks/${res.body.id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
    });

    it('defaults the description to null', async () => {
      const res = await api.admin.post('/stacks', { name: uniqueName('stack'), generator_id: adminGen });
      expect(res.status).to.equal(201);
      expect(res.body.description).to.equal(null);
    });

    it('lets a generator create stacks only for itself', async () => {
      const own = await owner.client.post('/stacks', { name: uniqueName('stack'), generator_id: owner.id });
      expect(own.status).to.equal(201);
      const other = await owner.client.post('/stacks', { name: uniqueName('stack'), generator_id: adminGen });
      expect(other.status).to.equal(403);
      expect(other.body.code).to.equal('stack_generator_mismatch');
    });

    it('refuses agents: 403 stack_create_denied', async () => {
      const agent = await insertAgent();
      const res = await agent.client.post('/stacks', { name: uniqueName('stack'), generator_id: owner.id });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('stack_create_denied');
    });

    it('answers 409 unique_violation for a live duplicate name, across generators', async () => {
      const name = uniqueName('dup');
      await createStack(api.admin, { name, generator_id: owner.id });
      const res = await api.admin.post('/stacks', { name, generator_id: adminGen });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('unique_violation');
      expect(res.body.details.constraint).to.equal('unique_stack_name');
    });

    it('answers 422 foreign_key_violation for an unknown or deleted generator', async () => {
      const unknown = await api.admin.post('/stacks', { name: uniqueName('stack'), generator_id: crypto.randomUUID() });
      expect(unknown.status).to.equal(422);
      expect(unknown.body.code).to.equal('foreign_key_violation');
      const gone = await createGenerator(api.admin);
      expect((await api.admin.delete(`/generators/${gone.generator.id}`)).status).to.equal(204);
      const deleted = await api.admin.post('/stacks', { name: uniqueName('stack'), generator_id: gone.generator.id });
      expect(deleted.status).to.equal(422);
      expect(deleted.body.code).to.equal('foreign_key_violation');
    });

    it('emits stack.created and audits it with the real actor', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id, description: 'audited' });
      const event = await eventually(async () => (await events('stack.created')).find((e) => e.data.stack_id === stack.id));
      expect(event.data).to.deep.equal({
        stack_id: stack.id,
        name: stack.name,
        description: 'audited',
        created_at: (stack as { created_at?: string }).created_at,
      });
      const audit = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'stack.created')).find((a) => a.resource_id === stack.id),
      );
      expect(audit).to.include({ actor_type: 'generator', actor_id: owner.id, resource_type: 'stack' });
      expect(audit.details).to.deep.equal({ name: stack.name, generator_id: owner.id });
    });

    it('lists all live stacks for the admin and only its own for a generator; agents get 403', async () => {
      const mine = await createStack(owner.client, { generator_id: owner.id });
      const theirs = await createStack(api.admin, { generator_id: adminGen });
      const all = await api.admin.get('/stacks');
      expect(all.status).to.equal(200);
      const allIds = all.body.map((s: { id: string }) => s.id);
      expect(allIds).to.include.members([mine.id, theirs.id]);

      const own = await owner.client.get('/stacks');
      expect(own.status).to.equal(200);
      expect(own.body.every((s: { generator_id: string }) => s.generator_id === owner.id)).to.equal(true);
      expect(own.body.map((s: { id: string }) => s.id))
        .to.include(mine.id)
        .and.not.include(theirs.id);

      const agent = await insertAgent({ targets: [mine.id] });
      const denied = await agent.client.get('/stacks');
      expect(denied.status).to.equal(403);
      expect(denied.body.code).to.equal('stacks_list_denied');
    });

    it('answers 404 stack_not_found for unknown ids and 400 for malformed ones', async () => {
      const unknown = await api.admin.get(`/stacks/${crypto.randomUUID()}`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('stack_not_found');
      const malformed = await api.admin.get('/stacks/not-a-uuid');
      expect(malformed.status).to.equal(400);
      expect(malformed.body.code).to.equal('invalid_id');
    });
  });

  describe('update', () => {
    it('writes name, description and generator_id from the full object and audits stack.updated', async () => {
      const stack = (await api.admin.post('/stacks', { name: uniqueName('stack'), description: 'd1', generator_id: owner.id })).body;
      const renamed = uniqueName('renamed');
      const res = await owner.client.put(`/stacks/${stack.id}`, { ...stack, name: renamed, description: 'd2' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: stack.id, name: renamed, description: 'd2', generator_id: owner.id, created_at: stack.created_at });
      const audit = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'stack.updated')).find((a) => a.resource_id === stack.id),
      );
      expect(audit).to.include({ actor_type: 'generator', actor_id: owner.id });
      expect(audit.details).to.deep.equal({ name: renamed });
    });

    it('keeps the description when the body has null', async () => {
      const stack = (await api.admin.post('/stacks', { name: uniqueName('stack'), description: 'keep', generator_id: owner.id })).body;
      const res = await api.admin.put(`/stacks/${stack.id}`, { ...stack, description: null });
      expect(res.status).to.equal(200);
      expect(res.body.description).to.equal('keep');
    });

    it('checks 404 and 403 before the id mismatch (400 stack_id_mismatch)', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      const full = (await api.admin.get(`/stacks/${stack.id}`)).body;
      const mismatch = await api.admin.put(`/stacks/${stack.id}`, { ...full, id: crypto.randomUUID() });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.body.code).to.equal('stack_id_mismatch');

      const missing = await api.admin.put(`/stacks/${crypto.randomUUID()}`, full);
      expect(missing.status).to.equal(404);
      expect(missing.body.code).to.equal('stack_not_found');

      const other = await createGenerator(api.admin);
      const foreign = await other.client.put(`/stacks/${stack.id}`, { ...full, id: crypto.randomUUID() });
      expect(foreign.status).to.equal(403);
      expect(foreign.body.code).to.equal('stack_not_owned');
    });

    it('answers 422 for a partial object, 409 for a taken name, 422 for an unknown generator', async () => {
      const a = await createStack(api.admin, { generator_id: owner.id });
      const b = (await api.admin.get(`/stacks/${(await createStack(api.admin, { generator_id: owner.id })).id}`)).body;
      const partial = await api.admin.put(`/stacks/${b.id}`, { name: 'x' });
      expect(partial.status).to.equal(422);
      expect(partial.body.code).to.equal('invalid_request_body');
      const taken = await api.admin.put(`/stacks/${b.id}`, { ...b, name: a.name });
      expect(taken.status).to.equal(409);
      expect(taken.body.details.constraint).to.equal('unique_stack_name');
      const unknown = await api.admin.put(`/stacks/${b.id}`, { ...b, generator_id: crypto.randomUUID() });
      expect(unknown.status).to.equal(422);
      expect(unknown.body.code).to.equal('foreign_key_violation');
    });
  });

  describe('delete', () => {
    it('soft-deletes: 204, then 404, the name is free again, stack.deleted and the audit entry', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const del = await owner.client.delete(`/stacks/${stack.id}`);
      expect(del.status).to.equal(204);
      expect(del.text).to.equal('');
      expect((await api.admin.get(`/stacks/${stack.id}`)).status).to.equal(404);
      expect((await api.admin.delete(`/stacks/${stack.id}`)).status).to.equal(404);
      const listed = await api.admin.get('/stacks');
      expect(listed.body.map((s: { id: string }) => s.id)).to.not.include(stack.id);

      const again = await owner.client.post('/stacks', { name: stack.name, generator_id: owner.id });
      expect(again.status).to.equal(201);
      expect(again.body.id).to.not.equal(stack.id);

      const { rows } = await api.sql.query<{ deleted_at: Date }>('SELECT deleted_at FROM stacks WHERE id = $1', [stack.id]);
      expect(rows[0]!.deleted_at).to.be.instanceOf(Date);
      const event = await eventually(async () => (await events('stack.deleted')).find((e) => e.data.stack_id === stack.id));
      expect(event.data.deleted_at).to.equal(rows[0]!.deleted_at.toISOString());
      const audit = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'stack.deleted')).find((a) => a.resource_id === stack.id),
      );
      expect(audit).to.include({ actor_type: 'generator', actor_id: owner.id, resource_type: 'stack' });
    });

    it('retires the live objects and inserts one live deletion marker (the stack trigger)', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      const posted = await api.admin.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
      expect(posted.status).to.equal(201);
      expect((await api.admin.delete(`/stacks/${stack.id}`)).status).to.equal(204);
      const { rows } = await api.sql.query<{
        id: string;
        deleted_at: Date | null;
        is_deletion_marker: boolean;
        yaml_content: string;
        yaml_checksum: string;
        sequence_id: number;
      }>(
        'SELECT id, deleted_at, is_deletion_marker, yaml_content, yaml_checksum, sequence_id FROM deployment_objects WHERE stack_id = $1 ORDER BY sequence_id',
        [stack.id],
      );
      expect(rows).to.have.length(2);
      expect(rows[0]!.id).to.equal(posted.body.id);
      expect(rows[0]!.deleted_at).to.not.equal(null);
      expect(rows[1]).to.include({
        deleted_at: null,
        is_deletion_marker: true,
        yaml_content: '',
        yaml_checksum: 'd41d8cd98f00b204e9800998ecf8427e',
      });
      expect(rows[1]!.sequence_id).to.be.greaterThan(rows[0]!.sequence_id);
    });

    it('wakes the agents associated with the stack', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      const agent = await insertAgent({ targets: [stack.id] });
      const notes = await collectCore(api.natsUrl, `brokkr.notify.agent.${agent.id}`);
      try {
        expect((await api.admin.delete(`/stacks/${stack.id}`)).status).to.equal(204);
        await eventually(() => notes.messages.length > 0, { what: 'a wake-up for the targeted agent' });
      } finally {
        await notes.close();
      }
    });
  });

  describe('labels', () => {
    it('adds a bare-string label (201 StackLabel), lists and removes it', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const added = await owner.client.post(`/stacks/${stack.id}/labels`, 'env-prod');
      expect(added.status, added.text).to.equal(201);
      expect(Object.keys(added.body).sort()).to.deep.equal(['id', 'label', 'stack_id']);
      expect(added.body).to.include({ stack_id: stack.id, label: 'env-prod' });
      const listed = await owner.client.get(`/stacks/${stack.id}/labels`);
      expect(listed.status).to.equal(200);
      expect(listed.body).to.deep.equal([added.body]);
      const removed = await owner.client.delete(`/stacks/${stack.id}/labels/env-prod`);
      expect(removed.status).to.equal(204);
      expect((await owner.client.get(`/stacks/${stack.id}/labels`)).body).to.deep.equal([]);
      const again = await owner.client.delete(`/stacks/${stack.id}/labels/env-prod`);
      expect(again.status).to.equal(404);
      expect(again.body.code).to.equal('stack_label_not_found');
    });

    it('rejects blank, over-long and whitespace labels with 400 invalid_label; a non-string body with 422', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      for (const label of ['', '   ', 'a'.repeat(65), 'has space', 'tab\there', 'new\nline']) {
        const res = await api.admin.post(`/stacks/${stack.id}/labels`, label);
        expect(res.status, JSON.stringify(label)).to.equal(400);
        expect(res.body.code).to.equal('invalid_label');
      }
      expect((await api.admin.post(`/stacks/${stack.id}/labels`, 'a'.repeat(64))).status).to.equal(201);
      const object = await api.admin.post(`/stacks/${stack.id}/labels`, { label: 'x' });
      expect(object.status).to.equal(422);
      expect((await api.admin.get(`/stacks/${stack.id}/labels`)).body).to.have.length(1);
    });

    it('answers 409 for a duplicate label and 404 for an unknown or deleted stack', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      expect((await api.admin.post(`/stacks/${stack.id}/labels`, 'dup')).status).to.equal(201);
      const dup = await api.admin.post(`/stacks/${stack.id}/labels`, 'dup');
      expect(dup.status).to.equal(409);
      expect(dup.body.code).to.equal('unique_violation');
      const unknown = await api.admin.post(`/stacks/${crypto.randomUUID()}/labels`, 'x');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('stack_not_found');
      await api.admin.delete(`/stacks/${stack.id}`);
      expect((await api.admin.post(`/stacks/${stack.id}/labels`, 'y')).body.code).to.equal('stack_not_found');
      expect((await api.admin.delete(`/stacks/${stack.id}/labels/dup`)).body.code).to.equal('stack_not_found');
    });

    it('decodes the label in the DELETE path and never fails on a long one', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      expect((await api.admin.post(`/stacks/${stack.id}/labels`, 'team/a:b=c')).status).to.equal(201);
      expect((await api.admin.delete(`/stacks/${stack.id}/labels/${encodeURIComponent('team/a:b=c')}`)).status).to.equal(204);
      const long = await api.admin.delete(`/stacks/${stack.id}/labels/${'x'.repeat(500)}`);
      expect(long.status).to.equal(404);
      expect(long.body.code).to.equal('stack_label_not_found');
    });

    it('lets the admin list labels of an unknown stack ([]); others get 404', async () => {
      const res = await api.admin.get(`/stacks/${crypto.randomUUID()}/labels`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal([]);
      const gen = await owner.client.get(`/stacks/${crypto.randomUUID()}/labels`);
      expect(gen.status).to.equal(404);
      expect(gen.body.code).to.equal('stack_not_found');
    });

    it('wakes agents that gain or lose the stack through a label', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      const label = uniqueName('wake');
      const agent = await insertAgent({ labels: [label], registeredWith: [owner.id] });
      const notes = await collectCore(api.natsUrl, `brokkr.notify.agent.${agent.id}`);
      try {
        expect((await api.admin.post(`/stacks/${stack.id}/labels`, label)).status).to.equal(201);
        await eventually(() => notes.messages.length >= 1, { what: 'a wake-up after adding the label' });
        const before = notes.messages.length;
        expect((await api.admin.delete(`/stacks/${stack.id}/labels/${label}`)).status).to.equal(204);
        await eventually(() => notes.messages.length > before, { what: 'a wake-up after removing the label' });
      } finally {
        await notes.close();
      }
    });
  });

  describe('annotations', () => {
    it('adds (201 StackAnnotation), lists and removes an annotation', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const added = await owner.client.post(`/stacks/${stack.id}/annotations`, { stack_id: stack.id, key: 'tier', value: 'gold' });
      expect(added.status, added.text).to.equal(201);
      expect(Object.keys(added.body).sort()).to.deep.equal(['id', 'key', 'stack_id', 'value']);
      expect(added.body).to.include({ stack_id: stack.id, key: 'tier', value: 'gold' });
      expect((await owner.client.get(`/stacks/${stack.id}/annotations`)).body).to.deep.equal([added.body]);
      expect((await owner.client.delete(`/stacks/${stack.id}/annotations/tier`)).status).to.equal(204);
      const again = await owner.client.delete(`/stacks/${stack.id}/annotations/tier`);
      expect(again.status).to.equal(404);
      expect(again.body.code).to.equal('stack_annotation_not_found');
    });

    it('answers 400 stack_id_mismatch, 409 unique_stack_annotation and 400 invalid_annotation', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      const path = `/stacks/${stack.id}/annotations`;
      const mismatch = await api.admin.post(path, { stack_id: crypto.randomUUID(), key: 'k', value: 'v' });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.body.code).to.equal('stack_id_mismatch');
      expect((await api.admin.post(path, { stack_id: stack.id, key: 'k', value: 'v' })).status).to.equal(201);
      const dup = await api.admin.post(path, { stack_id: stack.id, key: 'k', value: 'other' });
      expect(dup.status).to.equal(409);
      expect(dup.body.code).to.equal('unique_violation');
      expect(dup.body.details.constraint).to.equal('unique_stack_annotation');
      for (const [key, value] of [
        ['', 'v'],
        [' ', 'v'],
        ['k2', ''],
        ['x'.repeat(65), 'v'],
        ['k3', 'y'.repeat(65)],
      ]) {
        const res = await api.admin.post(path, { stack_id: stack.id, key, value });
        expect(res.status, `${key}=${value}`).to.equal(400);
        expect(res.body.code).to.equal('invalid_annotation');
      }
      const missing = await api.admin.post(path, { stack_id: stack.id, key: 'k4' });
      expect(missing.status).to.equal(422);
      const badId = await api.admin.post(path, { stack_id: 'nope', key: 'k4', value: 'v' });
      expect(badId.status).to.equal(422);
    });

    it('wakes agents that lose the stack when a matching annotation is removed', async () => {
      const stack = await createStack(api.admin, { generator_id: owner.id });
      const agent = await insertAgent({ registeredWith: [owner.id] });
      await api.sql.query(`INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, 'zone', 'z9')`, [agent.id]);
      expect((await api.admin.post(`/stacks/${stack.id}/annotations`, { stack_id: stack.id, key: 'zone', value: 'z9' })).status).to.equal(
        201,
      );
      const notes = await collectCore(api.natsUrl, `brokkr.notify.agent.${agent.id}`);
      try {
        expect((await api.admin.delete(`/stacks/${stack.id}/annotations/zone`)).status).to.equal(204);
        await eventually(() => notes.messages.length > 0, { what: 'a wake-up after removing the annotation' });
      } finally {
        await notes.close();
      }
    });
  });

  it('documents the stack and deployment-object endpoints in the OpenAPI document', async () => {
    const doc = await api.anonymous.get('//docs/openapi.json');
    expect(doc.status).to.equal(200);
    for (const path of [
      '/api/v1/stacks',
      '/api/v1/stacks/{id}',
      '/api/v1/stacks/{id}/labels/{label}',
      '/api/v1/stacks/{id}/annotations/{key}',
      '/api/v1/deployment-objects/{id}',
    ]) {
      expect(doc.body.paths, path).to.have.property(path);
    }
    const post = doc.body.paths['/api/v1/stacks/{id}/deployment-objects'].post;
    expect(Object.keys(post.requestBody.content)).to.include.members([
      'application/json',
      'application/yaml',
      'text/yaml',
      'application/x-yaml',
    ]);
    expect(doc.body.components.schemas).to.include.keys('Stack', 'StackLabel', 'StackAnnotation', 'DeploymentObject');
  });

  describe('bad input never yields a 500', () => {
    it('maps overlong names, NUL characters and malformed ids to 4xx', async () => {
      const cases: [string, () => Promise<{ status: number }>][] = [
        ['overlong name', () => api.admin.post('/stacks', { name: 'n'.repeat(300), generator_id: owner.id })],
        ['NUL in name', () => api.admin.post('/stacks', { name: 'a\u0000b', generator_id: owner.id })],
        ['NUL in description', () => api.admin.post('/stacks', { name: uniqueName('s'), description: '\u0000', generator_id: owner.id })],
        ['bad generator id', () => api.admin.post('/stacks', { name: uniqueName('s'), generator_id: 'x' })],
        ['bad stack id', () => api.admin.get('/stacks/123/labels')],
        ['bad stack id on DELETE', () => api.admin.delete('/stacks/%00')],
        ['huge label path', () => api.admin.delete(`/stacks/${crypto.randomUUID()}/labels/${'%F0%9F%92%A9'.repeat(100)}`)],
        ['bad JSON', () => api.admin.request('POST', '/stacks', { raw: '{"name":', contentType: 'application/json' })],
      ];
      for (const [what, call] of cases) {
        const res = await call();
        expect(res.status, what).to.be.within(400, 499);
      }
    });
  });
});

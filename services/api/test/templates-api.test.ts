import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  RFC3339_Z,
  auditMessages,
  createGenerator,
  createStack,
  insertAgentRow,
  readStream,
  startTestApi,
  uniqueName,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

const TEMPLATE_FIELDS = [
  'checksum',
  'created_at',
  'deleted_at',
  'description',
  'generator_id',
  'id',
  'name',
  'parameters_schema',
  'template_content',
  'updated_at',
  'version',
];

const SERVICE = 'kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: {{ name }}\ndata:\n  replicas: "{{ replicas | default(value=1) }}"\n';
const SERVICE_SCHEMA = JSON.stringify({
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1 }, replicas: { type: 'integer', minimum: 1, maximum: 20 } },
});

interface Template {
  id: string;
  name: string;
  version: number;
  generator_id: string | null;
  description: string | null;
  template_content: string;
}

describe('api templates: endpoints, versions, access, labels and annotations', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let owner: { id: string; client: ApiClient };
  let other: { id: string; client: ApiClient };
  let agent: ApiClient;

  async function createTemplate(client: ApiClient, body: Record<string, unknown> = {}): Promise<Template> {
    const res = await client.post<Template>('/templates', {
      name: uniqueName('tpl'),
      template_content: SERVICE,
      parameters_schema: SERVICE_SCHEMA,
      ...body,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  before(async () => {
    api = await startTestApi(infra);
    const a = await createGenerator(api.admin);
    const b = await createGenerator(api.admin);
    owner = { id: a.generator.id, client: a.client };
    other = { id: b.generator.id, client: b.client };
    const { pak } = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    agent = api.admin.as(pak);
  });

  after(async () => {
    await api?.stop();
  });

  describe('create and versions', () => {
    it('an admin creates a system template: 201, generator_id null, version 1, checksum = sha256(content)', async () => {
      const res = await api.admin.post('/templates', {
        name: uniqueName('sys'),
        description: 'd',
        template_content: SERVICE,
        parameters_schema: SERVICE_SCHEMA,
      });
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(TEMPLATE_FIELDS);
      expect(res.body).to.include({ generator_id: null, version: 1, description: 'd', deleted_at: null });
      expect(res.body.checksum).to.equal(createHash('sha256').update(SERVICE).digest('hex'));
      expect(res.body.created_at).to.match(RFC3339_Z);
    });

    it('reusing a name creates the next version per owner (not a 409); a generator template is its own', async () => {
      const name = uniqueName('reuse');
      const v1 = await createTemplate(api.admin, { name });
      const v2 = await createTemplate(api.admin, { name });
      const mine = await createTemplate(owner.client, { name });
      expect([v1.version, v2.version]).to.deep.equal([1, 2]);
      expect(v2.id).to.not.equal(v1.id);
      expect(mine).to.include({ version: 1, generator_id: owner.id });
    });

    it('PUT answers 200 with a new row (version + 1, same name); the old version is untouched and labels are not copied', async () => {
      const v1 = await createTemplate(owner.client, { description: 'first' });
      expect((await owner.client.post(`/templates/${v1.id}/labels`, 'env-prod')).status).to.equal(201);
      const res = await owner.client.put<Template>(`/templates/${v1.id}`, { template_content: 'a: {{ name }}\n', parameters_schema: '{}' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ name: v1.name, version: 2, description: 'first', generator_id: owner.id });
      expect(res.body.id).to.not.equal(v1.id);
      const old = await owner.client.get<Template>(`/templates/${v1.id}`);
      expect(old.body).to.include({ version: 1, template_content: SERVICE });
      expect((await owner.client.get(`/templates/${res.body.id}/labels`)).body).to.deep.equal([]);
      const v3 = await owner.client.put<Template>(`/templates/${res.body.id}`, {
        description: 'third',
        template_content: 'b: 1\n',
        parameters_schema: '{}',
      });
      expect(v3.body).to.include({ version: 3, description: 'third' });
    });

    it('keeps the version history: the list has one entry per live version; a deleted version is gone and numbering goes on', async () => {
      const name = uniqueName('hist');
      const v1 = await createTemplate(owner.client, { name });
      const v2 = await owner.client.put<Template>(`/templates/${v1.id}`, { template_content: 'v: 2\n', parameters_schema: '{}' });
      const versions = async () =>
        (await owner.client.get<Template[]>('/templates')).body.filter((t) => t.name === name).map((t) => t.version);
      expect(await versions()).to.deep.equal([1, 2]);
      expect((await owner.client.delete(`/templates/${v2.body.id}`)).status).to.equal(204);
      expect((await owner.client.get(`/templates/${v2.body.id}`)).body.code).to.equal('template_not_found');
      expect(await versions()).to.deep.equal([1]);
      const v3 = await createTemplate(owner.client, { name });
      expect(v3.version).to.equal(2);
    });

    it('refuses bad input with 400 and stores nothing', async () => {
      const name = uniqueName('bad');
      const cases: [Record<string, unknown>, string][] = [
        [{ name: '  ' }, 'invalid_template'],
        [{ template_content: ' \n' }, 'invalid_template'],
        [{ template_content: 'a: {{ name ' }, 'invalid_template_syntax'],
        [{ template_content: '{% if x %}open' }, 'invalid_template_syntax'],
        [{ template_content: 'a: {{ name | no_such_filter }}' }, 'invalid_template_syntax'],
        [{ template_content: '{% include "other" %}' }, 'invalid_template_syntax'],
        [{ template_content: 'a: {{ get_env(name="HOME") }}' }, 'invalid_template_syntax'],
        [{ parameters_schema: 'not json' }, 'invalid_parameters_schema'],
        [{ parameters_schema: '{"type": 12}' }, 'invalid_parameters_schema'],
        [{ parameters_schema: '[1]' }, 'invalid_parameters_schema'],
      ];
      for (const [body, code] of cases) {
        const res = await api.admin.post('/templates', { name, template_content: SERVICE, parameters_schema: SERVICE_SCHEMA, ...body });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code, JSON.stringify(body)).to.equal(code);
      }
      const missing = await api.admin.post('/templates', { name, template_content: SERVICE });
      expect([missing.status, missing.body.code]).to.deep.equal([422, 'invalid_request_body']);
      const { rows } = await api.sql.query('SELECT 1 FROM stack_templates WHERE name = $1', [name]);
      expect(rows).to.have.length(0);
    });

    it('audits template.created, template.updated and template.deleted with the real actor', async () => {
      const t = await createTemplate(owner.client);
      const v2 = await owner.client.put<Template>(`/templates/${t.id}`, { template_content: 'x: 1\n', parameters_schema: '{}' });
      await owner.client.delete(`/templates/${v2.body.id}`);
      await eventually(async () => {
        const created = (await auditMessages(api.natsUrl, 'template.created')).find((a) => a.resource_id === t.id);
        const updated = (await auditMessages(api.natsUrl, 'template.updated')).find((a) => a.resource_id === v2.body.id);
        const deleted = (await auditMessages(api.natsUrl, 'template.deleted')).find((a) => a.resource_id === v2.body.id);
        expect(created).to.include({ actor_type: 'generator', actor_id: owner.id, resource_type: 'template' });
        expect(created?.details).to.deep.equal({ name: t.name, version: 1 });
        expect(updated?.details).to.deep.equal({ name: t.name, version: 2 });
        expect(deleted).to.include({ actor_type: 'generator', actor_id: owner.id });
        return true;
      });
    });
  });

  describe('authorization matrix', () => {
    type Who = 'admin' | 'owner' | 'other' | 'agent';
    const client = (who: Who) => ({ admin: api.admin, owner: owner.client, other: other.client, agent })[who];

    it('reads: admin and the owner read a generator template; another generator and an agent get 403 template_not_accessible', async () => {
      const t = await createTemplate(owner.client);
      const expected: Record<Who, [number, string?]> = {
        admin: [200],
        owner: [200],
        other: [403, 'template_not_accessible'],
        agent: [403, 'template_not_accessible'],
      };
      for (const path of [`/templates/${t.id}`, `/templates/${t.id}/labels`, `/templates/${t.id}/annotations`]) {
        for (const who of Object.keys(expected) as Who[]) {
          const res = await client(who).get(path);
          expect([res.status, res.body?.code], `${who} GET ${path}`).to.deep.equal(expected[who][1] ? expected[who] : [200, undefined]);
        }
      }
    });

    it('reads: every generator reads a system template; an agent does not', async () => {
      const t = await createTemplate(api.admin);
      for (const who of ['admin', 'owner', 'other'] as Who[])
        expect((await client(who).get(`/templates/${t.id}`)).status, who).to.equal(200);
      const res = await agent.get(`/templates/${t.id}`);
      expect([res.status, res.body.code]).to.deep.equal([403, 'template_not_accessible']);
    });

    it('changes (PUT, DELETE, labels, annotations): admin and the owner; others get 403 template_not_owned, also on system templates', async () => {
      const generatorTemplate = await createTemplate(owner.client);
      const systemTemplate = await createTemplate(api.admin);
      const denied: [Who, Template][] = [
        ['other', generatorTemplate],
        ['agent', generatorTemplate],
        ['owner', systemTemplate],
        ['agent', systemTemplate],
      ];
      for (const [who, t] of denied) {
        const c = client(who);
        const attempts = [
          await c.put(`/templates/${t.id}`, { template_content: 'a: 1', parameters_schema: '{}' }),
          await c.delete(`/templates/${t.id}`),
          await c.post(`/templates/${t.id}/labels`, 'x'),
          await c.delete(`/templates/${t.id}/labels/x`),
          await c.post(`/templates/${t.id}/annotations`, { key: 'k', value: 'v' }),
          await c.delete(`/templates/${t.id}/annotations/k`),
        ];
        for (const res of attempts)
          expect([res.status, res.body.code], `${who} on ${t.generator_id ?? 'system'}`).to.deep.equal([403, 'template_not_owned']);
      }
      for (const who of ['admin', 'owner'] as Who[]) {
        const t = await createTemplate(owner.client);
        expect((await client(who).post(`/templates/${t.id}/labels`, 'x')).status, who).to.equal(201);
        expect((await client(who).delete(`/templates/${t.id}/labels/x`)).status, who).to.equal(204);
        expect((await client(who).put(`/templates/${t.id}`, { template_content: 'a: 1', parameters_schema: '{}' })).status, who).to.equal(
          200,
        );
        expect((await client(who).delete(`/templates/${t.id}`)).status, who).to.equal(204);
      }
    });

    it('lists: admin sees every version, a generator the system templates and its own, an agent gets 403 templates_not_accessible', async () => {
      const mine = await createTemplate(owner.client);
      const theirs = await createTemplate(other.client);
      const system = await createTemplate(api.admin);
      const ids = async (c: ApiClient) => (await c.get<Template[]>('/templates')).body.map((t) => t.id);
      expect(await ids(api.admin)).to.include.members([mine.id, theirs.id, system.id]);
      const seen = await ids(owner.client);
      expect(seen).to.include.members([mine.id, system.id]);
      expect(seen).to.not.include(theirs.id);
      const res = await agent.get('/templates');
      expect([res.status, res.body.code]).to.deep.equal([403, 'templates_not_accessible']);
      const create = await agent.post('/templates', { name: 'x', template_content: 'a: 1', parameters_schema: '{}' });
      expect([create.status, create.body.code]).to.deep.equal([403, 'templates_not_accessible']);
    });

    it('an unknown or deleted template is 404 template_not_found on every endpoint', async () => {
      const t = await createTemplate(owner.client);
      await owner.client.delete(`/templates/${t.id}`);
      for (const id of [t.id, '00000000-0000-4000-8000-000000000000']) {
        const attempts = [
          await api.admin.get(`/templates/${id}`),
          await api.admin.put(`/templates/${id}`, { template_content: 'a: 1', parameters_schema: '{}' }),
          await api.admin.delete(`/templates/${id}`),
          await api.admin.get(`/templates/${id}/labels`),
          await api.admin.post(`/templates/${id}/labels`, 'x'),
          await api.admin.delete(`/templates/${id}/labels/x`),
          await api.admin.get(`/templates/${id}/annotations`),
          await api.admin.post(`/templates/${id}/annotations`, { key: 'k', value: 'v' }),
          await api.admin.delete(`/templates/${id}/annotations/k`),
        ];
        for (const res of attempts) expect([res.status, res.body.code]).to.deep.equal([404, 'template_not_found']);
      }
    });
  });

  describe('labels and annotations', () => {
    it('adds, lists and removes labels; validates them; a duplicate is 409', async () => {
      const t = await createTemplate(owner.client);
      const res = await owner.client.post(`/templates/${t.id}/labels`, 'env=prod');
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(['created_at', 'id', 'label', 'template_id']);
      expect(res.body).to.include({ template_id: t.id, label: 'env=prod' });
      for (const bad of ['', '  ', 'a b', 'x'.repeat(65)]) {
        const r = await owner.client.post(`/templates/${t.id}/labels`, bad);
        expect([r.status, r.body.code], JSON.stringify(bad)).to.deep.equal([400, 'invalid_label']);
      }
      const dup = await owner.client.post(`/templates/${t.id}/labels`, 'env=prod');
      expect([dup.status, dup.body.code]).to.deep.equal([409, 'unique_violation']);
      expect((await owner.client.get(`/templates/${t.id}/labels`)).body.map((l: { label: string }) => l.label)).to.deep.equal(['env=prod']);
      expect((await owner.client.delete(`/templates/${t.id}/labels/env=prod`)).status).to.equal(204);
      const gone = await owner.client.delete(`/templates/${t.id}/labels/env=prod`);
      expect([gone.status, gone.body.code]).to.deep.equal([404, 'template_label_not_found']);
    });

    it('adds, lists and removes annotations; validates key and value; one value per key', async () => {
      const t = await createTemplate(owner.client);
      const res = await owner.client.post(`/templates/${t.id}/annotations`, { key: 'tier', value: '1' });
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(['created_at', 'id', 'key', 'template_id', 'value']);
      for (const bad of [
        { key: '', value: 'v' },
        { key: 'k', value: 'a b' },
        { key: 'k'.repeat(65), value: 'v' },
      ]) {
        const r = await owner.client.post(`/templates/${t.id}/annotations`, bad);
        expect([r.status, r.body.code], JSON.stringify(bad)).to.deep.equal([400, 'invalid_annotation']);
      }
      const dup = await owner.client.post(`/templates/${t.id}/annotations`, { key: 'tier', value: '2' });
      expect([dup.status, dup.body.code]).to.deep.equal([409, 'unique_violation']);
      expect((await owner.client.get(`/templates/${t.id}/annotations`)).body).to.have.length(1);
      expect((await owner.client.delete(`/templates/${t.id}/annotations/tier`)).status).to.equal(204);
      const gone = await owner.client.delete(`/templates/${t.id}/annotations/tier`);
      expect([gone.status, gone.body.code]).to.deep.equal([404, 'template_annotation_not_found']);
    });
  });

  describe('instantiation', () => {
    const instantiate = (c: ApiClient, stackId: string, templateId: string, parameters: unknown) =>
      c.post(`/stacks/${stackId}/deployment-objects/from-template`, { template_id: templateId, parameters });

    async function objectCount(stackId: string): Promise<number> {
      const { rows } = await api.sql.query('SELECT count(*)::int AS n FROM deployment_objects WHERE stack_id = $1', [stackId]);
      return rows[0].n;
    }

    it('renders into a new deployment object, records provenance and emits deployment.created', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const t = await createTemplate(owner.client);
      const res = await instantiate(owner.client, stack.id, t.id, { name: 'web', replicas: 3 });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.yaml_content).to.equal('kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: web\ndata:\n  replicas: "3"\n');
      expect(res.body).to.include({ stack_id: stack.id, is_deletion_marker: false });
      const { rows } = await api.sql.query('SELECT * FROM rendered_deployment_objects WHERE deployment_object_id = $1', [res.body.id]);
      expect(rows[0]).to.include({ template_id: t.id, template_version: 1 });
      expect(JSON.parse(rows[0].template_parameters)).to.deep.equal({ name: 'web', replicas: 3 });
      await eventually(async () => {
        const events = await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS');
        const created = events.find((e) => e.data.event_type === 'deployment.created' && e.data.data.deployment_object_id === res.body.id);
        expect(created?.data.data).to.include({ stack_id: stack.id });
        return true;
      });
    });

    it('checks in Brokkr order: stack, then template, then matching, parameters, render, YAML', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const theirStack = await createStack(other.client, { generator_id: other.id });
      const t = await createTemplate(owner.client);
      const theirs = await createTemplate(other.client);
      const unknown = '00000000-0000-4000-8000-000000000000';
      const check = async (res: Awaited<ReturnType<typeof instantiate>>, status: number, code: string) =>
        expect([res.status, res.body.code], res.text).to.deep.equal([status, code]);
      await check(await instantiate(owner.client, unknown, unknown, {}), 404, 'stack_not_found');
      await check(await instantiate(owner.client, theirStack.id, t.id, { name: 'a' }), 403, 'stack_not_owned');
      await check(await instantiate(agent, stack.id, t.id, { name: 'a' }), 403, 'stack_not_owned');
      await check(await instantiate(owner.client, stack.id, unknown, { name: 'a' }), 404, 'template_not_found');
      await check(await instantiate(owner.client, stack.id, theirs.id, { name: 'a' }), 403, 'template_not_accessible');
      expect(await objectCount(stack.id)).to.equal(0);
    });

    it('invalid parameters: 400 invalid_parameters with Brokkr-style validation_errors', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const t = await createTemplate(owner.client);
      const res = await instantiate(owner.client, stack.id, t.id, { replicas: 0 });
      expect([res.status, res.body.code]).to.deep.equal([400, 'invalid_parameters']);
      expect(res.body.details.validation_errors).to.have.members([
        '"name" is a required property',
        '/replicas: 0 is less than the minimum of 1',
      ]);
      const typed = await instantiate(owner.client, stack.id, t.id, { name: 5, replicas: 21 });
      expect(typed.body.details.validation_errors).to.have.members([
        '/name: 5 is not of type "string"',
        '/replicas: 21 is greater than the maximum of 20',
      ]);
      expect(await objectCount(stack.id)).to.equal(0);
    });

    it('an undefined variable fails the render: 400 template_render_failed naming it', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const t = await createTemplate(owner.client, { template_content: 'a: {{ name }}\nb: {{ image }}\n', parameters_schema: '{}' });
      const res = await instantiate(owner.client, stack.id, t.id, { name: 'x' });
      expect([res.status, res.body.code]).to.deep.equal([400, 'template_render_failed']);
      expect(res.body.message).to.contain('Variable `image` not found');
      expect(await objectCount(stack.id)).to.equal(0);
    });

    it('blank or invalid rendered YAML: 400 invalid_deployment_object (Brokkr would store invalid YAML)', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const blank = await createTemplate(owner.client, { template_content: '{% if on %}a: 1{% endif %}\n', parameters_schema: '{}' });
      const broken = await createTemplate(owner.client, { template_content: 'a: [{{ x }}\n', parameters_schema: '{}' });
      const r1 = await instantiate(owner.client, stack.id, blank.id, {});
      expect([r1.status, r1.body.code]).to.deep.equal([400, 'invalid_deployment_object']);
      const r2 = await instantiate(owner.client, stack.id, broken.id, { x: 1 });
      expect([r2.status, r2.body.code]).to.deep.equal([400, 'invalid_deployment_object']);
      expect(await objectCount(stack.id)).to.equal(0);
    });

    it('a runaway template (endless loop, gigantic output, a backtracking schema pattern) gets a 400 and the api keeps serving', async () => {
      const stack = await createStack(owner.client, { generator_id: owner.id });
      const endless = await createTemplate(owner.client, {
        template_content:
          '{% for a in range(end=100000) %}{% for b in range(end=100000) %}{% for c in range(end=100000) %}{% endfor %}{% endfor %}{% endfor %}a: 1\n',
        parameters_schema: '{}',
      });
      const huge = await createTemplate(owner.client, {
        template_content:
          '{% for a in range(end=100000) %}{% for b in range(end=100000) %}x: yyyyyyyyyyyyyyyyyyyyyyy\n{% endfor %}{% endfor %}',
        parameters_schema: '{}',
      });
      // A parameters schema whose pattern backtracks for ever on the given value (ajv runs it).
      const backtracking = await createTemplate(owner.client, {
        template_content: 'a: {{ x }}\n',
        parameters_schema: JSON.stringify({ properties: { x: { type: 'string', pattern: '^(a+)+$' } } }),
      });
      const pending = instantiate(owner.client, stack.id, endless.id, {});
      const pendingPattern = instantiate(owner.client, stack.id, backtracking.id, { x: `${'a'.repeat(40)}b` });
      // While the endless render runs on its worker, the api answers other requests.
      expect((await owner.client.get(`/templates/${endless.id}`)).status).to.equal(200);
      for (const r of [await pending, await pendingPattern]) {
        expect([r.status, r.body.code]).to.deep.equal([400, 'template_render_failed']);
        expect(r.body.message).to.contain('took longer than');
      }
      const r2 = await instantiate(owner.client, stack.id, huge.id, {});
      expect([r2.status, r2.body.code]).to.deep.equal([400, 'template_render_failed']);
      expect(r2.body.message, r2.body.message).to.contain('exceeds the limit');
      const ok = await instantiate(owner.client, stack.id, (await createTemplate(owner.client)).id, { name: 'after' });
      expect(ok.status, ok.text).to.equal(201);
    });
  });

  describe('template-to-stack matching (AND)', () => {
    it('needs every template label and annotation on the stack; lists what is missing; extra stack labels do not matter', async () => {
      const t = await createTemplate(owner.client);
      await owner.client.post(`/templates/${t.id}/labels`, 'env=prod');
      await owner.client.post(`/templates/${t.id}/labels`, 'tier-1');
      await owner.client.post(`/templates/${t.id}/annotations`, { key: 'region', value: 'eu' });
      const stack = await createStack(owner.client, { generator_id: owner.id });
      await owner.client.post(`/stacks/${stack.id}/labels`, 'env=prod');
      await owner.client.post(`/stacks/${stack.id}/annotations`, { stack_id: stack.id, key: 'region', value: 'us' });

      const body = { template_id: t.id, parameters: { name: 'm' } };
      const miss = await owner.client.post(`/stacks/${stack.id}/deployment-objects/from-template`, body);
      expect([miss.status, miss.body.code]).to.deep.equal([422, 'template_stack_mismatch']);
      expect(miss.body.details).to.deep.equal({ missing_labels: ['tier-1'], missing_annotations: [['region', 'eu']] });

      await owner.client.post(`/stacks/${stack.id}/labels`, 'tier-1');
      await owner.client.post(`/stacks/${stack.id}/labels`, 'extra');
      await owner.client.delete(`/stacks/${stack.id}/annotations/region`);
      await owner.client.post(`/stacks/${stack.id}/annotations`, { stack_id: stack.id, key: 'region', value: 'eu' });
      const ok = await owner.client.post(`/stacks/${stack.id}/deployment-objects/from-template`, body);
      expect(ok.status, ok.text).to.equal(201);
    });

    it('a template without labels or annotations matches every stack', async () => {
      const t = await createTemplate(api.admin);
      const stack = await createStack(other.client, { generator_id: other.id });
      await other.client.post(`/stacks/${stack.id}/labels`, 'anything');
      const res = await other.client.post(`/stacks/${stack.id}/deployment-objects/from-template`, {
        template_id: t.id,
        parameters: { name: 's' },
      });
      expect(res.status, res.text).to.equal(201);
    });
  });
});

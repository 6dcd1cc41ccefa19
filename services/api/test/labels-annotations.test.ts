import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  collectCore,
  createAgent,
  createGenerator,
  createStack,
  startTestApi,
  uniqueName,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * Agents, stacks and template versions carry labels and annotations through the same routes
 * (src/http/label-routes.ts, src/domain/labels/). Every case below runs against all three, so
 * their rules cannot drift apart again; only the body shapes and who may write differ, as in
 * Brokkr.
 */

type Kind = 'agent' | 'stack' | 'template';

interface Owner {
  /** `/agents/<id>`, `/stacks/<id>`, `/templates/<id>`. */
  path: string;
  id: string;
  /** Who may change them: the admin for an agent, the owning generator otherwise. */
  writer: ApiClient;
  labelBody(label: string): unknown;
  annotationBody(key: string, value: string): unknown;
}

const TEMPLATE = { template_content: 'kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n', parameters_schema: '{}' };

const INVALID_TAGS = ['', '   ', 'a b', 'tab\there', 'new\nline', 'no\u00a0break', 'x'.repeat(65)];
const VALID_TAGS = ['x'.repeat(64), '🙂'.repeat(64), 'team/a:b=c'];

describe('labels and annotations: one set of rules for agents, stacks and templates', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let tenant: { id: string; client: ApiClient };
  let stranger: ApiClient;

  before(async () => {
    api = await startTestApi(infra);
    const gen = await createGenerator(api.admin);
    tenant = { id: gen.generator.id, client: gen.client };
    stranger = (await createGenerator(api.admin)).client;
  });

  after(async () => {
    await api?.stop();
  });

  const create: Record<Kind, () => Promise<Owner>> = {
    async agent() {
      const { agent } = await createAgent(api.admin);
      return {
        path: `/agents/${agent.id}`,
        id: agent.id,
        writer: api.admin,
        labelBody: (label) => ({ agent_id: agent.id, label }),
        annotationBody: (key, value) => ({ agent_id: agent.id, key, value }),
      };
    },
    async stack() {
      const stack = await createStack(tenant.client, { generator_id: tenant.id });
      return {
        path: `/stacks/${stack.id}`,
        id: stack.id,
        writer: tenant.client,
        labelBody: (label) => label,
        annotationBody: (key, value) => ({ stack_id: stack.id, key, value }),
      };
    },
    async template() {
      const res = await tenant.client.post<{ id: string }>('/templates', { name: uniqueName('tpl'), ...TEMPLATE });
      expect(res.status, res.text).to.equal(201);
      return {
        path: `/templates/${res.body.id}`,
        id: res.body.id,
        writer: tenant.client,
        labelBody: (label) => label,
        annotationBody: (key, value) => ({ key, value }),
      };
    },
  };

  const expectError = (res: ApiResponse, status: number, code: string, what = '') =>
    expect([res.status, res.body?.code], `${what} ${res.text}`).to.deep.equal([status, code]);

  for (const kind of ['agent', 'stack', 'template'] as const) {
    describe(kind, () => {
      const ownerColumn = `${kind}_id`;

      it('adds labels (201), lists them by label, refuses a duplicate (409), removes one (204), then 404', async () => {
        const o = await create[kind]();
        const zeta = await o.writer.post(`${o.path}/labels`, o.labelBody('zeta'));
        expect(zeta.status, zeta.text).to.equal(201);
        expect(zeta.body).to.include({ [ownerColumn]: o.id, label: 'zeta' });
        const alpha = await o.writer.post(`${o.path}/labels`, o.labelBody('alpha'));
        expect(alpha.status, alpha.text).to.equal(201);
        expect((await o.writer.get(`${o.path}/labels`)).body).to.deep.equal([alpha.body, zeta.body]);

        expectError(await o.writer.post(`${o.path}/labels`, o.labelBody('zeta')), 409, 'unique_violation');
        expect((await o.writer.delete(`${o.path}/labels/alpha`)).status).to.equal(204);
        expectError(await o.writer.delete(`${o.path}/labels/alpha`), 404, `${kind}_label_not_found`);
        expect((await o.writer.get(`${o.path}/labels`)).body).to.deep.equal([zeta.body]);
      });

      it('adds annotations (201), lists them by key, one value per key (409), removes one (204), then 404', async () => {
        const o = await create[kind]();
        const tier = await o.writer.post(`${o.path}/annotations`, o.annotationBody('tier', 'gold'));
        expect(tier.status, tier.text).to.equal(201);
        expect(tier.body).to.include({ [ownerColumn]: o.id, key: 'tier', value: 'gold' });
        const app = await o.writer.post(`${o.path}/annotations`, o.annotationBody('app', 'web'));
        expect(app.status, app.text).to.equal(201);
        expect((await o.writer.get(`${o.path}/annotations`)).body).to.deep.equal([app.body, tier.body]);

        expectError(await o.writer.post(`${o.path}/annotations`, o.annotationBody('tier', 'silver')), 409, 'unique_violation');
        expect((await o.writer.delete(`${o.path}/annotations/app`)).status).to.equal(204);
        expectError(await o.writer.delete(`${o.path}/annotations/app`), 404, `${kind}_annotation_not_found`);
        expect((await o.writer.get(`${o.path}/annotations`)).body).to.deep.equal([tier.body]);
      });

      it('refuses blank, whitespace and over-long labels (400 invalid_label); 64 characters of any kind pass', async () => {
        const o = await create[kind]();
        for (const label of INVALID_TAGS) {
          expectError(await o.writer.post(`${o.path}/labels`, o.labelBody(label)), 400, 'invalid_label', JSON.stringify(label));
        }
        for (const label of VALID_TAGS) {
          const res = await o.writer.post(`${o.path}/labels`, o.labelBody(label));
          expect(res.status, `${label} ${res.text}`).to.equal(201);
        }
        const listed = (await o.writer.get<{ label: string }[]>(`${o.path}/labels`)).body.map((l) => l.label);
        expect(listed).to.have.members(VALID_TAGS);
        expect((await o.writer.delete(`${o.path}/labels/${encodeURIComponent('team/a:b=c')}`)).status).to.equal(204);
      });

      it('refuses blank, whitespace and over-long annotation keys and values (400 invalid_annotation)', async () => {
        const o = await create[kind]();
        for (const bad of INVALID_TAGS) {
          for (const [key, value] of [
            [bad, 'v'],
            ['k', bad],
          ] as const) {
            const res = await o.writer.post(`${o.path}/annotations`, o.annotationBody(key, value));
            expectError(res, 400, 'invalid_annotation', JSON.stringify([key, value]));
          }
        }
        for (const tag of VALID_TAGS) {
          const res = await o.writer.post(`${o.path}/annotations`, o.annotationBody(tag, tag));
          expect(res.status, `${tag} ${res.text}`).to.equal(201);
        }
        expect((await o.writer.delete(`${o.path}/annotations/${encodeURIComponent('team/a:b=c')}`)).status).to.equal(204);
        expect((await o.writer.get(`${o.path}/annotations`)).body).to.have.length(VALID_TAGS.length - 1);
      });

      it('another tenant can neither read nor change them (403), and nothing changes', async () => {
        const o = await create[kind]();
        expect((await o.writer.post(`${o.path}/labels`, o.labelBody('mine'))).status).to.equal(201);
        expect((await o.writer.post(`${o.path}/annotations`, o.annotationBody('k', 'mine'))).status).to.equal(201);
        const before = [(await o.writer.get(`${o.path}/labels`)).body, (await o.writer.get(`${o.path}/annotations`)).body];

        const attempts = {
          'GET labels': await stranger.get(`${o.path}/labels`),
          'POST label': await stranger.post(`${o.path}/labels`, o.labelBody('theirs')),
          'DELETE label': await stranger.delete(`${o.path}/labels/mine`),
          'GET annotations': await stranger.get(`${o.path}/annotations`),
          'POST annotation': await stranger.post(`${o.path}/annotations`, o.annotationBody('k2', 'theirs')),
          'DELETE annotation': await stranger.delete(`${o.path}/annotations/k`),
        };
        for (const [what, res] of Object.entries(attempts)) expect(res.status, `${what} ${res.text}`).to.equal(403);
        expect([(await o.writer.get(`${o.path}/labels`)).body, (await o.writer.get(`${o.path}/annotations`)).body]).to.deep.equal(before);
      });
    });
  }

  it('wakes the agent when its labels or annotations change (its matches, hence its target state, may differ)', async () => {
    const o = await create.agent();
    const notes = await collectCore(api.natsUrl, `brokkr.notify.agent.${o.id}`);
    try {
      const changes = [
        () => o.writer.post(`${o.path}/labels`, o.labelBody('wake')),
        () => o.writer.delete(`${o.path}/labels/wake`),
        () => o.writer.post(`${o.path}/annotations`, o.annotationBody('wake', 'up')),
        () => o.writer.delete(`${o.path}/annotations/wake`),
      ];
      for (const [i, change] of changes.entries()) {
        expect((await change()).status).to.be.oneOf([201, 204]);
        await eventually(() => notes.messages.length > i, { what: `a wake-up after change ${i + 1}` });
      }
    } finally {
      await notes.close();
    }
  });
});

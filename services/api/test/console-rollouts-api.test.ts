import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createAgent, createGenerator, createStack, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

/**
 * Who may read the console's rollout, timeline and template views (/ui/api): the same rules as the
 * v1 resources they come from — a rollout and a stack's events are the stack owner's (or an
 * admin's), a template's rendered stacks are listed only among the reader's own stacks.
 */
describe('console /ui/api rollout, stack events and template stacks: access', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let owner: { generator: { id: string }; pak: string; client: ApiClient };
  let stranger: { generator: { id: string }; pak: string; client: ApiClient };
  let agentPak: string;
  let stackId: string;
  let rolloutId: string;
  let systemTemplateId: string;
  let ownRendered: string;
  let strangerRendered: string;

  const ui = (path: string, pak: string) => api.anonymous.get(`//ui/api${path}`, { pak });
  const yaml = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "${v}"\n`;

  before(async () => {
    api = await startTestApi(infra);
    owner = await createGenerator(api.admin);
    stranger = await createGenerator(api.admin);
    agentPak = (await createAgent(api.admin, { generator_ids: [owner.generator.id] })).initial_pak;
    const stack = await createStack(owner.client, { generator_id: owner.generator.id });
    stackId = stack.id;
    expect((await owner.client.put(`/stacks/${stackId}/rollout-policy`, { waves: [{ name: 'all', percent: 100 }] })).status).to.equal(200);
    for (const v of ['1', '2']) await owner.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml(v) });
    rolloutId = (await owner.client.get(`/stacks/${stackId}/rollouts`)).body[0].id;

    const tpl = await api.admin.post('/templates', {
      name: 'system-cm',
      template_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ n }}\n',
      parameters_schema: '{"type":"object"}',
    });
    expect(tpl.status, tpl.text).to.equal(201);
    systemTemplateId = tpl.body.id;
    for (const who of [owner, stranger]) {
      const s = await createStack(who.client, { generator_id: who.generator.id });
      const res = await who.client.post(`/stacks/${s.id}/deployment-objects/from-template`, {
        template_id: systemTemplateId,
        parameters: { n: 'x' },
      });
      expect(res.status, res.text).to.equal(201);
      if (who === owner) ownRendered = s.id;
      else strangerRendered = s.id;
    }
  });
  after(() => api?.stop());

  it('a rollout’s detail: its owner and an admin read waves, agents and events; another generator and an agent get 403', async () => {
    const own = await ui(`/rollouts/${rolloutId}`, owner.pak);
    expect(own.status, own.text).to.equal(200);
    expect(own.body.rollout).to.include({ id: rolloutId, stack_id: stackId, status: 'pending' });
    expect(own.body).to.have.keys('rollout', 'wave_started_at', 'wave_healthy_since', 'agents', 'events');
    expect((await ui(`/rollouts/${rolloutId}`, api.adminPak)).status).to.equal(200);
    const foreign = await ui(`/rollouts/${rolloutId}`, stranger.pak);
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('rollout_not_owned');
    expect((await ui(`/rollouts/${rolloutId}`, agentPak)).status).to.equal(403);
    expect((await ui('/rollouts/not-a-uuid', owner.pak)).status).to.equal(400);
  });

  it('a stack’s timeline holds its events (deployment.created among them) for its owner only', async () => {
    const own = await ui(`/stacks/${stackId}/events`, owner.pak);
    expect(own.status, own.text).to.equal(200);
    expect((own.body.events as { event_type: string }[]).map((e) => e.event_type)).to.include('deployment.created');
    expect((own.body.events as { data: { stack_id: string } }[]).every((e) => e.data.stack_id === stackId)).to.equal(true);
    expect((await ui(`/stacks/${stackId}/events`, stranger.pak)).status).to.equal(403);
  });

  it('a template’s rendered stacks: a generator sees only its own stacks, an admin every one', async () => {
    const mine = await ui(`/templates/${systemTemplateId}/stacks`, owner.pak);
    expect(mine.status, mine.text).to.equal(200);
    expect((mine.body.stacks as { stack_id: string }[]).map((s) => s.stack_id)).to.deep.equal([ownRendered]);
    const all = await ui(`/templates/${systemTemplateId}/stacks`, api.adminPak);
    expect((all.body.stacks as { stack_id: string }[]).map((s) => s.stack_id).sort()).to.deep.equal([ownRendered, strangerRendered].sort());
    expect((await ui(`/templates/${systemTemplateId}/stacks`, agentPak)).status).to.equal(403);
  });
});

import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createAgent, createGenerator, createStack, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

/**
 * GET /rollouts: the fleet-wide list the console's rollouts page and `brokkr get rollouts` read.
 * Rollouts are opened by the deployment object's insert (no maintenance needed to see them pending).
 */
describe('api GET /rollouts (across the fleet)', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  const tenants: { id: string; client: ApiClient; stackId: string; stackName: string }[] = [];
  let agentClient: ApiClient;
  let agentId: string;

  const POLICY = { waves: [{ name: 'all', percent: 100 }] };
  const yaml = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "${v}"\n`;

  before(async () => {
    api = await startTestApi(infra);
    for (let i = 0; i < 2; i++) {
      const g = await createGenerator(api.admin);
      const stack = await createStack(g.client, { generator_id: g.generator.id });
      expect((await g.client.put(`/stacks/${stack.id}/rollout-policy`, POLICY)).status).to.equal(200);
      for (const v of ['1', '2'])
        expect((await g.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: yaml(v) })).status).to.equal(201);
      tenants.push({ id: g.generator.id, client: g.client, stackId: stack.id, stackName: stack.name });
    }
    const agent = await createAgent(api.admin, { generator_ids: [tenants[0]!.id] });
    agentClient = agent.client;
    agentId = agent.agent.id;
  });
  after(() => api?.stop());

  it('an admin sees every stack’s rollouts with the stack name; a generator only its own', async () => {
    const all = await api.admin.get('/rollouts');
    expect(all.status, all.text).to.equal(200);
    const stacks = (all.body as { stack_id: string; stack_name: string }[]).map((r) => `${r.stack_id} ${r.stack_name}`);
    for (const t of tenants) expect(stacks).to.include(`${t.stackId} ${t.stackName}`);

    const own = await tenants[0]!.client.get('/rollouts');
    expect(own.status, own.text).to.equal(200);
    expect((own.body as { stack_id: string }[]).map((r) => r.stack_id)).to.deep.equal([tenants[0]!.stackId]);
    expect(own.body[0].waves).to.deep.equal([
      {
        index: 0,
        name: 'all',
        released: false,
        agents: 0,
        applied: 0,
        healthy: 0,
        failed: 0,
        required_approvals: 0,
        approvals: 0,
        awaiting_approval: false,
      },
    ]);
  });

  it('filters by a comma-separated status list; an unknown status is a 400, an agent a 403', async () => {
    const pending = await api.admin.get('/rollouts', { query: { status: 'pending,progressing' } });
    expect(pending.status, pending.text).to.equal(200);
    expect((pending.body as { status: string }[]).every((r) => ['pending', 'progressing'].includes(r.status))).to.equal(true);
    expect(pending.body.length).to.be.at.least(2);
    const none = await api.admin.get('/rollouts', { query: { status: 'rolled_back' } });
    expect(none.body).to.deep.equal([]);

    const bogus = await api.admin.get('/rollouts', { query: { status: 'exploded' } });
    expect(bogus.status).to.equal(400);
    expect(bogus.body.code).to.be.a('string');

    const denied = await agentClient.get('/rollouts');
    expect(denied.status, `agent ${agentId}`).to.equal(403);
    expect(denied.body.code).to.equal('rollouts_not_accessible');
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  auditMessages,
  createAgent,
  createGenerator,
  createStack,
  readStream,
  startTestApi,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

/**
 * Drift records on the hub (docs/drift.md): agents report what changed behind their back, in
 * batches that can be sent twice; the hub keeps one record per object and episode, pages them
 * without a cap, groups them across the fleet, lets the stack's owner accept one (an ignore rule
 * in the stack's policy, which reaches the agents with their grants), and tells the event stream.
 */
describe('api drift records', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });
  after(() => api?.stop());

  interface Tenant {
    gen: ApiClient;
    generatorId: string;
    stackId: string;
    agents: { id: string; client: ApiClient }[];
  }

  /** A generator with one stack, served to `n` agents registered with it (explicit targets). */
  async function tenant(n = 1, labels: string[] = []): Promise<Tenant> {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const agents: Tenant['agents'] = [];
    for (let i = 0; i < n; i++) {
      const { agent, client } = await createAgent(api.admin, { generator_ids: [gen.generator.id] });
      expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
      for (const label of labels)
        expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
      expect((await gen.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
      agents.push({ id: agent.id, client });
    }
    return { gen: gen.client, generatorId: gen.generator.id, stackId: stack.id, agents };
  }

  const deployment = (name: string) => ({ api_version: 'apps/v1', kind: 'Deployment', namespace: 'shop', name });
  const replicas = (live: number, manager = 'kubectl-scale') => ({
    path: '/spec/replicas',
    desired: 2,
    live,
    manager,
    operation: 'Update',
    time: '2026-01-01T00:00:00Z',
  });

  function report(stackId: string, name: string, extra: Record<string, unknown> = {}) {
    return {
      id: randomUUID(),
      stack_id: stackId,
      deployment_object_id: null,
      object: deployment(name),
      state: 'open',
      fields: [replicas(5)],
      observed_at: new Date().toISOString(),
      ...extra,
    };
  }

  const post = (client: ApiClient, agentId: string, body: unknown) => client.post(`/agents/${agentId}/drift`, body);

  async function outboxCount(type: string, stackId: string): Promise<number> {
    const { rows } = await api.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox WHERE event_type = $1 AND payload->'data'->>'stack_id' = $2`,
      [type, stackId],
    );
    return rows[0]!.n;
  }

  async function allPages(client: ApiClient, path: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; text: string; body: { items: { id: string }[]; next_cursor: string | null } } = await client.get(path, {
        query: { limit: String(limit), ...(cursor ? { cursor } : {}) },
      });
      expect(res.status, res.text).to.equal(200);
      ids.push(...res.body.items.map((r) => r.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    return { ids, pages };
  }

  describe('reports', () => {
    it('opens one record per object with the path, both values and the manager; a batch sent twice changes nothing', async () => {
      const t = await tenant();
      const [agent] = t.agents;
      const batch = { reports: [report(t.stackId, 'web')] };
      const first = await post(agent!.client, agent!.id, batch);
      expect(first.status, first.text).to.equal(200);
      expect(first.body).to.deep.equal({ accepted: 1, detected: 1, corrected: 0, resolved: 0, closed: [] });
      const again = await post(agent!.client, agent!.id, batch);
      expect(again.body).to.deep.include({ detected: 0 });

      const page = await t.gen.get(`/stacks/${t.stackId}/drift`);
      expect(page.status, page.text).to.equal(200);
      expect(page.body.items).to.have.length(1);
      const record = page.body.items[0];
      expect(record).to.deep.include({ stack_id: t.stackId, agent_id: agent!.id, state: 'open', missing: false, closed_at: null });
      expect(record.object).to.deep.equal(deployment('web'));
      expect(record.fields).to.deep.equal([replicas(5)]);
      expect(await outboxCount('drift.detected', t.stackId)).to.equal(1);
    });

    it('refreshes the open record when a restarted agent reports the same object under a new episode id', async () => {
      const t = await tenant();
      const [agent] = t.agents;
      await post(agent!.client, agent!.id, { reports: [report(t.stackId, 'api')] });
      const later = report(t.stackId, 'api', { fields: [replicas(7)] });
      expect((await post(agent!.client, agent!.id, { reports: [later] })).body).to.deep.include({ detected: 0 });
      const page = await t.gen.get(`/stacks/${t.stackId}/drift`);
      expect(page.body.items).to.have.length(1);
      expect(page.body.items[0].fields[0].live).to.equal(7);
    });

    it('closes a record as corrected (drift.corrected), and records detection and correction at once when the hub never saw it open', async () => {
      const t = await tenant();
      const [agent] = t.agents;
      const open = report(t.stackId, 'web');
      await post(agent!.client, agent!.id, { reports: [open] });
      const corrected = await post(agent!.client, agent!.id, { reports: [{ ...open, state: 'corrected' }] });
      expect(corrected.body).to.deep.include({ corrected: 1, detected: 0 });
      const both = await post(agent!.client, agent!.id, { reports: [report(t.stackId, 'worker', { state: 'corrected' })] });
      expect(both.body).to.deep.include({ corrected: 1, detected: 1 });
      const again = await post(agent!.client, agent!.id, { reports: [{ ...open, state: 'corrected' }] });
      expect(again.body).to.deep.include({ corrected: 0, detected: 0 });

      const records = (await t.gen.get(`/stacks/${t.stackId}/drift`, { query: { state: 'corrected' } })).body.items;
      expect(records.map((r: { object: { name: string } }) => r.object.name).sort()).to.deep.equal(['web', 'worker']);
      expect(records.every((r: { closed_at: string | null }) => r.closed_at !== null)).to.equal(true);
      expect(await outboxCount('drift.corrected', t.stackId)).to.equal(2);
      expect(await outboxCount('drift.detected', t.stackId)).to.equal(2);
    });

    it('resolves a record the agent reports gone, and, after a sweep, the open records of the swept stacks it did not report again', async () => {
      const t = await tenant();
      const [agent] = t.agents;
      const a = report(t.stackId, 'a');
      const b = report(t.stackId, 'b');
      await post(agent!.client, agent!.id, { reports: [a, b, report(t.stackId, 'c')] });
      expect((await post(agent!.client, agent!.id, { reports: [{ ...a, state: 'resolved' }] })).body).to.deep.include({ resolved: 1 });
      const sweepStart = new Date(Date.now() + 1000).toISOString();
      const swept = await post(agent!.client, agent!.id, {
        reports: [{ ...b, observed_at: new Date(Date.now() + 2000).toISOString() }],
        sweep: { stack_ids: [t.stackId], started_at: sweepStart },
      });
      expect(swept.body).to.deep.include({ resolved: 1 });
      const open = (await t.gen.get(`/stacks/${t.stackId}/drift`, { query: { state: 'open' } })).body.items;
      expect(open.map((r: { object: { name: string } }) => r.object.name)).to.deep.equal(['b']);
      expect(await outboxCount('drift.resolved', t.stackId)).to.equal(2);
    });

    it('publishes drift events through the outbox envelope to JetStream (webhooks and NATS subscribers get them)', async () => {
      const t = await tenant();
      const [agent] = t.agents;
      await post(agent!.client, agent!.id, { reports: [report(t.stackId, 'published')] });
      const event = await eventually(
        async () =>
          (await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS')).find(
            (m) => m.subject === 'brokkr.events.drift.detected' && m.data.data.stack_id === t.stackId,
          ),
        { what: 'drift.detected on BROKKR_EVENTS' },
      );
      expect(event.msgId).to.equal(event.data.id);
      expect(event.data.data).to.deep.include({
        agent_id: agent!.id,
        paths: ['/spec/replicas'],
        managers: ['kubectl-scale'],
        state: 'open',
      });
      expect(event.data.data).to.not.have.property('fields');
    });
  });

  describe('authorization', () => {
    it('takes reports from the agent itself only, and only about stacks it is served: nothing stored otherwise', async () => {
      const t = await tenant();
      const other = await tenant();
      const [agent] = t.agents;
      const foreign = await post(agent!.client, agent!.id, { reports: [report(t.stackId, 'x'), report(other.stackId, 'y')] });
      expect(foreign.status, foreign.text).to.equal(422);
      expect(foreign.body.code).to.equal('drift_stack_not_served');
      const asAnother = await post(other.agents[0]!.client, agent!.id, { reports: [report(t.stackId, 'x')] });
      expect(asAnother.status).to.equal(403);
      expect(asAnother.body.code).to.equal('agent_pak_mismatch');
      const asAdmin = await post(api.admin, agent!.id, { reports: [report(t.stackId, 'x')] });
      expect(asAdmin.status).to.equal(403);
      const { rows } = await api.sql.query('SELECT 1 FROM drift_records WHERE stack_id = ANY($1::uuid[])', [[t.stackId, other.stackId]]);
      expect(rows).to.have.length(0);
    });

    it('lets the admin read every record and a generator only its own stacks’; agents read none', async () => {
      const mine = await tenant();
      const theirs = await tenant();
      await post(mine.agents[0]!.client, mine.agents[0]!.id, { reports: [report(mine.stackId, 'm')] });
      await post(theirs.agents[0]!.client, theirs.agents[0]!.id, { reports: [report(theirs.stackId, 't')] });
      const theirRecord = (await api.admin.get(`/stacks/${theirs.stackId}/drift`)).body.items[0];

      const fleet = (await mine.gen.get('/drift', { query: { limit: '1000' } })).body.items as { stack_id: string }[];
      expect(fleet.length).to.be.greaterThan(0);
      expect(fleet.every((r) => r.stack_id === mine.stackId)).to.equal(true);
      expect((await mine.gen.get(`/stacks/${theirs.stackId}/drift`)).body.code).to.equal('stack_not_owned');
      expect((await mine.gen.get(`/drift/${theirRecord.id}`)).body.code).to.equal('drift_record_not_owned');
      expect((await mine.gen.post(`/drift/${theirRecord.id}/accept`, {})).status).to.equal(403);
      expect((await mine.gen.get('/drift', { query: { stack_id: theirs.stackId } })).body.items).to.have.length(0);
      const groups = (await mine.gen.get('/drift/groups', { query: { by: 'stack' } })).body;
      expect(groups.groups.map((g: { key: string }) => g.key)).to.deep.equal([mine.stackId]);

      const agent = mine.agents[0]!.client;
      expect((await agent.get('/drift')).body.code).to.equal('drift_not_readable');
      expect((await agent.get(`/stacks/${mine.stackId}/drift`)).status).to.equal(403);
      expect((await api.admin.get(`/drift/${theirRecord.id}`)).body.id).to.equal(theirRecord.id);
    });
  });

  describe('reading across the fleet', () => {
    it('pages through every record exactly once (no cap), newest first, while reports keep refreshing them', async () => {
      const t = await tenant(3);
      const total = 3 * 110;
      for (const agent of t.agents) {
        const reports = Array.from({ length: 110 }, (_, i) => report(t.stackId, `obj-${i}`));
        expect((await post(agent.client, agent.id, { reports })).status).to.equal(200);
      }
      const ids: string[] = [];
      let cursor: string | null = null;
      let refreshed = false;
      do {
        const res: { status: number; body: { items: { id: string; first_seen: string }[]; next_cursor: string | null }; text: string } =
          await t.gen.get(`/stacks/${t.stackId}/drift`, { query: { limit: '47', ...(cursor ? { cursor } : {}) } });
        expect(res.status, res.text).to.equal(200);
        ids.push(...res.body.items.map((r) => r.id));
        cursor = res.body.next_cursor;
        if (!refreshed) {
          // Every record's last_seen moves while the reader is between pages.
          const agent = t.agents[0]!;
          const again = Array.from({ length: 110 }, (_, i) => report(t.stackId, `obj-${i}`));
          await post(agent.client, agent.id, { reports: again });
          refreshed = true;
        }
      } while (cursor);
      expect(ids).to.have.length(total);
      expect(new Set(ids).size).to.equal(total);
      const fleet = await allPages(api.admin, '/drift', 1000);
      expect(fleet.ids).to.include.members(ids);
      expect((await t.gen.get(`/stacks/${t.stackId}/drift`, { query: { cursor: 'not-a-cursor' } })).body.code).to.equal('invalid_cursor');
    });

    it('groups by field, manager and agent: how many records and of how many clusters, and by whom', async () => {
      const t = await tenant(4);
      const [a, b, c] = t.agents;
      await post(a!.client, a!.id, { reports: [report(t.stackId, 'web'), report(t.stackId, 'api', { fields: [replicas(3, 'hpa')] })] });
      await post(b!.client, b!.id, { reports: [report(t.stackId, 'web')] });
      const image = {
        path: '/spec/template/spec/containers/0/image',
        desired: 'a:1',
        live: 'a:2',
        manager: 'kubectl-edit',
        operation: 'Update',
        time: null,
      };
      await post(c!.client, c!.id, {
        reports: [report(t.stackId, 'web', { fields: [image] }), report(t.stackId, 'gone', { missing: true, fields: [] })],
      });

      const byField = (await t.gen.get(`/stacks/${t.stackId}/drift/groups`, { query: { by: 'field', state: 'open' } })).body;
      expect(byField).to.deep.include({ by: 'field', records: 5, agents: 3, agents_total: 4 });
      const replicasGroup = byField.groups.find((g: { key: string }) => g.key === '/spec/replicas');
      expect(replicasGroup).to.deep.include({ records: 3, agents: 2, stacks: 1 });
      expect(replicasGroup.managers).to.deep.equal([
        { manager: 'kubectl-scale', records: 2 },
        { manager: 'hpa', records: 1 },
      ]);
      expect(byField.groups.find((g: { key: string }) => g.key === '')).to.deep.include({ records: 1, agents: 1 });

      const byManager = (await t.gen.get(`/stacks/${t.stackId}/drift/groups`, { query: { by: 'manager' } })).body.groups;
      expect(byManager.find((g: { key: string }) => g.key === 'kubectl-scale')).to.deep.include({ records: 2, agents: 2 });
      const byAgent = (await t.gen.get(`/stacks/${t.stackId}/drift/groups`, { query: { by: 'agent' } })).body.groups;
      expect(byAgent.map((g: { agent_id: string; records: number }) => [g.agent_id, g.records])).to.deep.include.members([
        [a!.id, 2],
        [b!.id, 1],
        [c!.id, 2],
      ]);
      const cells = (await api.admin.get('/drift/groups', { query: { by: 'stack_agent', stack_id: t.stackId } })).body.groups;
      expect(cells.map((g: { key: string; stack_id: string; agent_id: string }) => [g.key, g.stack_id, g.agent_id])).to.have.deep.members(
        [a!, b!, c!].map((x) => [`${t.stackId}/${x.id}`, t.stackId, x.id]),
      );
      expect(cells.map((g: { records: number }) => g.records)).to.deep.equal([2, 2, 1]);
      expect(cells[0]).to.have.property('label').that.is.a('string');
      const filtered = (await t.gen.get(`/stacks/${t.stackId}/drift`, { query: { path: '/spec/replicas', manager: 'hpa' } })).body.items;
      expect(filtered.map((r: { object: { name: string } }) => r.object.name)).to.deep.equal(['api']);
    });
  });

  describe('policy and acceptance', () => {
    it('stores a policy, refuses a manager pattern that could stall the agent, and hands each agent its cluster group’s policy with its grants', async () => {
      const t = await tenant(1, ['env-dev']);
      const [agent] = t.agents;
      const before = await agent!.client.get(`/agents/${agent!.id}/target-state`, { query: { mode: 'full' } });
      const policy = {
        mode: 'report',
        ignore: [{ target: { kind: 'Deployment' }, paths: ['/spec/replicas'], managers: ['^hpa-controller$'] }],
        overrides: [{ agent_labels: ['env-dev'], mode: 'correct', comparison: 'full' }],
      };
      const put = await t.gen.put(`/stacks/${t.stackId}/drift-policy`, policy);
      expect(put.status, put.text).to.equal(200);
      expect(put.body.policy).to.deep.include({ mode: 'report', comparison: 'owned' });
      const bad = await t.gen.put(`/stacks/${t.stackId}/drift-policy`, { ignore: [{ managers: ['(a+)+$'] }] });
      expect(bad.status).to.equal(422);

      const grants = (await agent!.client.get(`/agents/${agent!.id}/grants`)).body;
      expect(grants.stacks.find((s: { stack_id: string }) => s.stack_id === t.stackId).drift).to.deep.equal({
        mode: 'correct',
        comparison: 'full',
        ignore: policy.ignore,
      });
      const after = await agent!.client.get(`/agents/${agent!.id}/target-state`, { query: { mode: 'full' } });
      expect(after.headers.get('etag')).to.be.a('string').and.not.equal(before.headers.get('etag'));
      expect(after.headers.get('brokkr-grants')).to.not.equal(before.headers.get('brokkr-grants'));

      expect((await agent!.client.get(`/stacks/${t.stackId}/drift-policy`)).status).to.equal(403);
      expect((await t.gen.delete(`/stacks/${t.stackId}/drift-policy`)).status).to.equal(204);
      expect((await t.gen.get(`/stacks/${t.stackId}/drift-policy`)).body.code).to.equal('drift_policy_not_found');
      const plain = (await agent!.client.get(`/agents/${agent!.id}/grants`)).body;
      expect(plain.stacks.find((s: { stack_id: string }) => s.stack_id === t.stackId)).to.not.have.property('drift');
    });

    it('accepts an open record: an ignore rule for its paths on that object, the record closed as accepted, audited; twice is 409', async () => {
      const t = await tenant();
      const [agent] = t.agents;
      await post(agent!.client, agent!.id, { reports: [report(t.stackId, 'web')] });
      const record = (await t.gen.get(`/stacks/${t.stackId}/drift`)).body.items[0];
      const accepted = await t.gen.post(`/drift/${record.id}/accept`, { note: 'hotfix, keep it' });
      expect(accepted.status, accepted.text).to.equal(200);
      expect(accepted.body).to.deep.equal({ record_id: record.id, stack_id: t.stackId, rules: 1 });
      const policy = (await t.gen.get(`/stacks/${t.stackId}/drift-policy`)).body.policy;
      expect(policy.ignore).to.deep.equal([
        {
          target: { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
          paths: ['/spec/replicas'],
          note: 'hotfix, keep it',
          accepted_from: record.id,
        },
      ]);
      expect((await t.gen.get(`/drift/${record.id}`)).body.state).to.equal('accepted');
      expect((await t.gen.post(`/drift/${record.id}/accept`, {})).status).to.equal(409);
      const audit = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'drift.accepted')).find((a) => a.resource_id === t.stackId),
      );
      expect(audit.details).to.deep.include({ record_id: record.id });
      // The agent's report of the same episode after the acceptance does not reopen it: the answer tells it the episode is closed.
      const late = await post(agent!.client, agent!.id, { reports: [{ ...report(t.stackId, 'web'), id: record.id }] });
      expect(late.body).to.deep.include({ detected: 0, closed: [record.id] });
    });

    it('accepts an open record as an override: a layer for that agent keeps the live value in its render, the others keep the manifest’s; not for a Secret', async () => {
      const t = await tenant(2);
      const [drifted, other] = t.agents;
      const deployment = [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web, namespace: shop}',
        'spec:',
        '  replicas: 2',
        '  selector: {matchLabels: {app: web}}',
        '  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: main, image: "shop/web:1.0"}]}}',
      ].join('\n');
      expect((await t.gen.post(`/stacks/${t.stackId}/deployment-objects`, { yaml_content: deployment })).status).to.equal(201);
      const served = async (agent: { id: string; client: ApiClient }) => {
        const res = await agent.client.get<{ yaml_content: string }[]>(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
        expect(res.status, res.text).to.equal(200);
        return /replicas: (\d+)/.exec(res.body[0]!.yaml_content)?.[1];
      };
      expect(await served(drifted!)).to.equal('2');

      await post(drifted!.client, drifted!.id, { reports: [report(t.stackId, 'web')] });
      const record = (await t.gen.get(`/stacks/${t.stackId}/drift`)).body.items[0];
      const accepted = await t.gen.post(`/drift/${record.id}/accept`, { scope: 'override', note: 'five until the sale ends' });
      expect(accepted.status, accepted.text).to.equal(200);
      const name = `drift-${record.id.slice(0, 8)}`;
      expect(accepted.body).to.deep.equal({ record_id: record.id, stack_id: t.stackId, override: name });

      const fetched = await t.gen.get(`/stacks/${t.stackId}/overrides/${name}`);
      expect(fetched.status, fetched.text).to.equal(200);
      const layer = fetched.body;
      expect(layer.selector).to.deep.equal({ agent_ids: [drifted!.id] });
      expect(layer.patches).to.deep.equal([
        {
          target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop' },
          json_patch: [{ op: 'add', path: '/spec/replicas', value: 5 }],
        },
      ]);
      expect(await served(drifted!)).to.equal('5');
      expect(await served(other!)).to.equal('2');
      expect((await t.gen.get(`/drift/${record.id}`)).body.state).to.equal('accepted');
      expect((await t.gen.get(`/stacks/${t.stackId}/drift-policy`)).status, 'no ignore rule made').to.equal(404);
      expect((await t.gen.post(`/drift/${record.id}/accept`, { scope: 'override' })).body.code).to.equal('drift_not_open');
      const audit = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'drift.accepted')).find((a) => a.details?.record_id === record.id),
      );
      expect(audit.details).to.deep.include({ override: name, note: 'five until the sale ends' });

      const secret = {
        ...report(t.stackId, 'db'),
        object: { api_version: 'v1', kind: 'Secret', namespace: 'shop', name: 'db' },
        fields: [
          { path: '/data/password', desired: null, live: null, withheld: true, manager: 'kubectl-edit', operation: 'Update', time: null },
        ],
      };
      await post(drifted!.client, drifted!.id, { reports: [secret] });
      const secretRecord = (await t.gen.get(`/stacks/${t.stackId}/drift`, { query: { kind: 'Secret' } })).body.items[0];
      const refused = await t.gen.post(`/drift/${secretRecord.id}/accept`, { scope: 'override' });
      expect([refused.status, refused.body.code]).to.deep.equal([422, 'drift_not_keepable']);
      expect((await t.gen.get(`/drift/${secretRecord.id}`)).body.state).to.equal('open');
      expect((await t.gen.get(`/stacks/${t.stackId}/overrides`)).body.map((l: { name: string }) => l.name)).to.deep.equal([name]);
    });
  });

  it('counts open drift per stack on the metrics port, not on the public port', async () => {
    const t = await tenant();
    const [agent] = t.agents;
    await post(agent!.client, agent!.id, { reports: [report(t.stackId, 'm1'), report(t.stackId, 'm2')] });
    const scraped = await eventually(async () => {
      const text = await (await fetch(api.metricsUrl)).text();
      return text.includes(`stack_id="${t.stackId}"`) ? text : undefined;
    });
    expect(scraped).to.match(new RegExp(`brokkr_drift_open_records\\{[^}]*stack_id="${t.stackId}"[^}]*\\} 2`));
    expect(await (await fetch(`${api.url}/metrics`)).text()).to.not.include('brokkr_drift_open_records');
  });
});

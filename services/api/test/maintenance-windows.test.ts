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
 * Maintenance windows (docs/maintenance-windows.md): the admin and generators manage them (a
 * generator only its own, confined to its own stacks), a bad rule or duration is a 4xx naming
 * the field, and each agent is served, inside its grants, exactly the windows that select it —
 * a change moves its target state's ETag. Bypasses are audited and expire.
 */
describe('api maintenance windows', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });
  after(() => api?.stop());

  const weekly = 'DTSTART;TZID=Europe/Berlin:20260105T020000\nRRULE:FREQ=WEEKLY;BYDAY=MO';

  async function labelledAgent(generatorId: string, stackId: string, gen: ApiClient, labels: string[]) {
    const { agent, client } = await createAgent(api.admin, { generator_ids: [generatorId] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const label of labels)
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    expect((await gen.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stackId })).status).to.equal(201);
    return { id: agent.id as string, client };
  }

  const schedule = async (agent: { id: string; client: ApiClient }) =>
    (await agent.client.get(`/agents/${agent.id}/grants`)).body.maintenance.windows as { id: string; bypassed_until: string | null }[];
  const etag = async (agent: { id: string; client: ApiClient }) =>
    (await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } })).headers.get('etag');

  it('creates, lists, reads, changes and deletes a window; a bad rule, time zone or duration is a 4xx naming the field', async () => {
    const created = await api.admin.post('/maintenance-windows', { name: 'weekly', type: 'allow', rrule: weekly, duration: 'PT2H' });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.include({ type: 'allow', duration_seconds: 7200, agent_labels: [], owner_generator_id: null });
    expect(created.body.gates).to.deep.equal(['new_versions', 'drift_correction', 'prune', 'work_orders']);
    const id = created.body.id as string;
    expect((await api.admin.get(`/maintenance-windows/${id}`)).body.name).to.equal('weekly');
    expect((await api.admin.get('/maintenance-windows')).body.map((w: { id: string }) => w.id)).to.include(id);
    const patched = await api.admin.patch(`/maintenance-windows/${id}`, { duration: 600, gates: ['prune'] });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.deep.include({ duration_seconds: 600, gates: ['prune'], rrule: weekly });

    const bad = async (body: Record<string, unknown>, field: string, status = 422) => {
      const res = await api.admin.post('/maintenance-windows', { name: 'bad', type: 'deny', rrule: weekly, duration: 60, ...body });
      expect(res.status, res.text).to.equal(status);
      expect(res.body).to.have.keys(['code', 'message', 'details']);
      if (field) expect(res.body.details.field ?? JSON.stringify(res.body.details)).to.include(field);
    };
    await bad({ rrule: 'DTSTART;TZID=Mars/Olympus:20260105T020000\nRRULE:FREQ=DAILY' }, 'rrule');
    await bad({ rrule: 'DTSTART:20260105T020000\nRRULE:FREQ=DAILY' }, 'rrule');
    await bad({ rrule: 'DTSTART:20260105T020000Z\nRRULE:FREQ=FORTNIGHTLY' }, 'rrule');
    await bad({ rrule: 'DTSTART:20260105T020000Z\nRRULE:FREQ=MINUTELY' }, 'rrule');
    await bad({ rrule: 'RRULE:FREQ=DAILY' }, 'rrule');
    await bad({ duration: 'PT' }, 'duration');
    await bad({ duration: 'P30D' }, 'duration');
    await bad({ type: 'sometimes' }, 'type');
    await bad({ gates: ['everything'] }, 'gates');

    expect((await api.admin.delete(`/maintenance-windows/${id}`)).status).to.equal(204);
    const gone = await api.admin.get(`/maintenance-windows/${id}`);
    expect([gone.status, gone.body.code]).to.deep.equal([404, 'maintenance_window_not_found']);
  });

  it('lets a generator manage only its own windows, on its own stacks; agents none', async () => {
    const a = await createGenerator(api.admin);
    const b = await createGenerator(api.admin);
    const stackA = await createStack(a.client, { generator_id: a.generator.id });
    const stackB = await createStack(b.client, { generator_id: b.generator.id });
    const own = await a.client.post('/maintenance-windows', { name: 'a', type: 'deny', rrule: weekly, duration: 60 });
    expect(own.status, own.text).to.equal(201);
    expect(own.body).to.deep.include({ owner_generator_id: a.generator.id, generator_ids: [a.generator.id] });
    const onStack = await a.client.post('/maintenance-windows', {
      name: 'a2',
      type: 'deny',
      rrule: weekly,
      duration: 60,
      stack_ids: [stackA.id],
    });
    expect(onStack.body).to.deep.include({ stack_ids: [stackA.id], generator_ids: [] });

    const foreignStack = await a.client.post('/maintenance-windows', {
      name: 'x',
      type: 'deny',
      rrule: weekly,
      duration: 60,
      stack_ids: [stackB.id],
    });
    expect([foreignStack.status, foreignStack.body.code]).to.deep.equal([403, 'stack_not_owned']);
    const foreignGen = await a.client.post('/maintenance-windows', {
      name: 'x',
      type: 'deny',
      rrule: weekly,
      duration: 60,
      generator_ids: [b.generator.id],
    });
    expect([foreignGen.status, foreignGen.body.code]).to.deep.equal([403, 'window_scope_not_owned']);
    expect((await b.client.get(`/maintenance-windows/${own.body.id}`)).status).to.equal(404);
    expect((await b.client.delete(`/maintenance-windows/${own.body.id}`)).status).to.equal(404);
    expect((await b.client.get('/maintenance-windows')).body.map((w: { id: string }) => w.id)).to.not.include(own.body.id);
    expect((await api.admin.get(`/maintenance-windows/${own.body.id}`)).status).to.equal(200);

    const { client: agent } = await createAgent(api.admin);
    const refused = await agent.get('/maintenance-windows');
    expect([refused.status, refused.body.code]).to.deep.equal([403, 'generator_required']);
  });

  it('serves each agent, in its grants, exactly the windows its labels select, and moves its ETag on every change', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const prod = await labelledAgent(gen.generator.id, stack.id, gen.client, ['env=prod', 'region=eu']);
    const dev = await labelledAgent(gen.generator.id, stack.id, gen.client, ['env=dev']);
    const [prodBefore, devBefore] = [await etag(prod), await etag(dev)];

    const window = await gen.client.post('/maintenance-windows', {
      name: 'prod freeze',
      type: 'deny',
      rrule: weekly,
      duration: 'P1D',
      agent_labels: ['env=prod'],
      stack_ids: [stack.id],
      gates: ['new_versions', 'prune'],
    });
    expect(window.status, window.text).to.equal(201);
    const served = await schedule(prod);
    expect(served).to.deep.equal([
      {
        id: window.body.id,
        name: 'prod freeze',
        type: 'deny',
        rrule: weekly,
        duration_seconds: 86400,
        stack_ids: [stack.id],
        generator_ids: [],
        gates: ['new_versions', 'prune'],
        bypassed_until: null,
      },
    ]);
    expect(await schedule(dev)).to.deep.equal([]);
    const prodWindowed = await etag(prod);
    expect(prodWindowed).to.not.equal(prodBefore);
    expect(await etag(dev)).to.equal(devBefore);

    expect((await gen.client.patch(`/maintenance-windows/${window.body.id}`, { agent_labels: ['env=dev'] })).status).to.equal(200);
    expect(await schedule(prod)).to.deep.equal([]);
    expect((await schedule(dev)).map((w) => w.id)).to.deep.equal([window.body.id]);
    expect(await etag(prod)).to.not.equal(prodWindowed);
    expect(await etag(dev)).to.not.equal(devBefore);
  });

  it('audits a bypass, shows it in the schedule until it expires, refuses one without expiry or beyond 24 h, and ends one early', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const agent = await labelledAgent(gen.generator.id, stack.id, gen.client, ['env=stage']);
    const window = (
      await api.admin.post('/maintenance-windows', { name: 'w', type: 'deny', rrule: weekly, duration: 3600, agent_labels: ['env=stage'] })
    ).body;
    const path = `/maintenance-windows/${window.id}/bypasses`;

    const missing = await api.admin.post(path, { reason: 'hotfix' });
    expect(missing.status).to.equal(422);
    const tooLong = await api.admin.post(path, { reason: 'hotfix', expires_at: new Date(Date.now() + 25 * 3600_000).toISOString() });
    expect([tooLong.status, tooLong.body.code, tooLong.body.details.field]).to.deep.equal([422, 'invalid_bypass', 'expires_at']);
    const past = await api.admin.post(path, { reason: 'hotfix', expires_at: new Date(Date.now() - 1000).toISOString() });
    expect(past.body.code).to.equal('invalid_bypass');

    const before = await etag(agent);
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const bypass = await api.admin.post(path, { reason: 'CVE hotfix', expires_at: expiresAt });
    expect(bypass.status, bypass.text).to.equal(201);
    expect(bypass.body).to.deep.include({ window_id: window.id, reason: 'CVE hotfix', created_by: 'admin', expires_at: expiresAt });
    expect((await schedule(agent))[0]!.bypassed_until).to.equal(expiresAt);
    expect(await etag(agent)).to.not.equal(before);
    expect((await api.admin.get(`/maintenance-windows/${window.id}`)).body.bypasses.map((b: { id: string }) => b.id)).to.deep.equal([
      bypass.body.id,
    ]);
    await eventually(async () => {
      const audited = await auditMessages(api.natsUrl, 'maintenance_window.bypass_created');
      const entry = audited.find((a) => a.resource_id === window.id);
      expect(entry?.details).to.deep.include({ bypass_id: bypass.body.id, reason: 'CVE hotfix', expires_at: expiresAt });
      expect(entry?.actor_type).to.equal('admin');
      return true;
    });

    // An expired bypass no longer counts: the listing drops it (the agent compares bypassed_until with its clock).
    await api.sql.query(`UPDATE maintenance_window_bypasses SET expires_at = now() - interval '1 second' WHERE id = $1`, [bypass.body.id]);
    expect((await api.admin.get(path)).body).to.deep.equal([]);
    const ended = await api.admin.delete(`${path}/${bypass.body.id}`);
    expect([ended.status, ended.body.code]).to.deep.equal([404, 'bypass_not_found']);

    const second = await api.admin.post(path, { reason: 'again', expires_at: new Date(Date.now() + 600_000).toISOString() });
    const early = await api.admin.delete(`${path}/${second.body.id}`);
    expect(early.status, early.text).to.equal(200);
    expect(early.body.ended_at).to.be.a('string');
    // Only the bypass that expired earlier is left in the schedule: a time in the past, which lifts nothing.
    const left = (await schedule(agent))[0]!.bypassed_until;
    expect(left === null || Date.parse(left) < Date.now()).to.equal(true);
    await eventually(async () => {
      const audited = await auditMessages(api.natsUrl, 'maintenance_window.bypass_ended');
      return audited.some((a) => (a.details as { bypass_id?: string }).bypass_id === second.body.id);
    });
  });

  it('turns an agent\u2019s window_blocked event (status BLOCKED) into deployment.window_blocked, not deployment.failed', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const agent = await labelledAgent(gen.generator.id, stack.id, gen.client, []);
    const object = await gen.client.post(`/stacks/${stack.id}/deployment-objects`, {
      yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: default}\n',
      is_deletion_marker: false,
    });
    expect(object.status, object.text).to.equal(201);
    const posted = await agent.client.post(`/agents/${agent.id}/events`, {
      agent_id: agent.id,
      deployment_object_id: object.body.id,
      event_type: 'window_blocked',
      status: 'BLOCKED',
      message: 'held by maintenance window "w"',
    });
    expect(posted.status, posted.text).to.be.oneOf([200, 201]);
    const published = await eventually(
      async () => {
        const found = (await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS')).filter(
          (m) =>
            (m.data.data as { deployment_object_id?: string }).deployment_object_id === object.body.id &&
            m.subject !== 'brokkr.events.deployment.created',
        );
        return found.length ? found : undefined;
      },
      { what: 'the agent event on BROKKR_EVENTS' },
    );
    expect(published.map((m) => m.subject)).to.deep.equal(['brokkr.events.deployment.window_blocked']);
  });

  it('answers why a stack is not on an agent: the deny window that holds its newest object there, until the agent applied it', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const prod = await labelledAgent(gen.generator.id, stack.id, gen.client, ['env=prod']);
    const dev = await labelledAgent(gen.generator.id, stack.id, gen.client, ['env=dev']);
    // Hourly occurrences two hours long: open at any time.
    const always = 'DTSTART:20260101T000000Z\nRRULE:FREQ=HOURLY';
    const window = await api.admin.post('/maintenance-windows', {
      name: 'freeze',
      type: 'deny',
      rrule: always,
      duration: 7200,
      agent_labels: ['env=prod'],
    });
    expect(window.status, window.text).to.equal(201);
    const object = await gen.client.post(`/stacks/${stack.id}/deployment-objects`, {
      yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen, namespace: default}\n',
      is_deletion_marker: false,
    });
    expect(object.status, object.text).to.equal(201);

    const held = (await gen.client.get(`/stacks/${stack.id}/agents/${prod.id}/status`)).body;
    expect(held).to.deep.include({ state: 'waiting', reason: 'window', window: { id: window.body.id, name: 'freeze', type: 'deny' } });
    expect(Date.parse(held.opens_at)).to.be.greaterThan(Date.now());
    expect((await gen.client.get(`/stacks/${stack.id}/agents/${dev.id}/status`)).body).to.deep.include({ state: 'served' });

    // Applied (say, in a bypass): on the cluster, whatever the window says now.
    const applied = await prod.client.post(`/agents/${prod.id}/events`, {
      agent_id: prod.id,
      deployment_object_id: object.body.id,
      event_type: 'APPLIED',
      status: 'SUCCESS',
    });
    expect(applied.status, applied.text).to.be.oneOf([200, 201]);
    expect((await gen.client.get(`/stacks/${stack.id}/agents/${prod.id}/status`)).body).to.deep.include({ state: 'served' });
  });
});

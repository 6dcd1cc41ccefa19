import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { createGenerator, createStack, startTestApi, type TestApi } from './support/index.ts';
import { Consumer, k8sEvent, logLine, targetedStack } from './support/cluster-events.ts';
import { WsAgent } from './support/ws-agent.ts';

const HINT = 'Brokkr retains telemetry for at most 6 hours. For long-term log centralisation, ship to Datadog or equivalent.';

interface Page {
  retention: {
    retention_ceiling_seconds: number;
    effective_retention_seconds: number;
    oldest_available_ts: string | null;
    long_term_sink_hint: string;
  };
  events?: Record<string, unknown>[];
  lines?: Record<string, unknown>[];
}

/** Cluster events: what agents stream over /internal/ws/agent, stored and read back through GET /stacks/{id}/events and /logs. */
describe('cluster events (ingest, retention, REST reads)', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  const sockets: { close(): void }[] = [];
  const track = <T extends { close(): void }>(s: T) => (sockets.push(s), s);

  before(async () => (api = await startTestApi(infra)));
  afterEach(() => sockets.splice(0).forEach((s) => s.close()));
  after(() => api?.stop());

  const logs = async (stackId: string, query: Record<string, string> = {}) =>
    (await api.admin.get<Page>(`/stacks/${stackId}/logs`, { query })).body;
  const events = async (stackId: string) => (await api.admin.get<Page>(`/stacks/${stackId}/events`)).body;
  /** Waits until a log line with this text is stored: every frame the same connection sent before it has been handled. */
  const stored = (stackId: string, line: string) =>
    eventually(async () => (await logs(stackId, { limit: '5000' })).lines!.find((l) => l.line === line), { timeoutMs: 20_000, what: line });

  it('stores k8s_event and pod_log_line frames and serves them with Brokkr shapes, newest first', async () => {
    const { stack, agent, gen } = await targetedStack(api.admin);
    const ws = track(await WsAgent.connect(api.url, agent.pak));
    const event = k8sEvent(agent.id, stack.id, 'web-1');
    ws.send('k8s_event', event);
    for (const line of ['one', 'two', 'three']) ws.send('pod_log_line', logLine(agent.id, stack.id, line));
    await stored(stack.id, 'three');

    const page = (await gen.client.get<Page>(`/stacks/${stack.id}/logs`)).body;
    expect(page.lines!.map((l) => l.line)).to.deep.equal(['three', 'two', 'one']);
    expect(Object.keys(page.lines![0]!).sort()).to.deep.equal([
      'agent_id',
      'container',
      'created_at',
      'id',
      'line',
      'namespace',
      'pod',
      'stack_id',
      'ts',
    ]);
    expect(page.lines![0]).to.include({ agent_id: agent.id, stack_id: stack.id, namespace: 'default', pod: 'web-1', container: 'app' });
    expect(page.retention).to.deep.include({
      retention_ceiling_seconds: 21600,
      effective_retention_seconds: 21600,
      long_term_sink_hint: HINT,
    });
    expect(page.retention.oldest_available_ts).to.equal(page.lines![2]!.created_at);

    const ev = await eventually(async () => (await events(stack.id)).events![0], { what: 'the event' });
    expect(Object.keys(ev).sort()).to.deep.equal(
      ['agent_id', 'created_at', 'event_type', 'id', 'involved_object', 'message', 'observed_at', 'reason', 'source', 'stack_id'].sort(),
    );
    expect(ev).to.deep.include({ reason: 'BackOff', event_type: 'Warning', source: 'kubelet', message: event.message, agent_id: agent.id });
    expect(ev.involved_object).to.deep.equal(event.involved_object);
    expect(new Date(ev.observed_at as string).toISOString()).to.equal(event.observed_at);
  });

  it('omitted optional fields are stored as null (source, involved_object.namespace and uid)', async () => {
    const { stack, agent } = await targetedStack(api.admin);
    const ws = track(await WsAgent.connect(api.url, agent.pak));
    const { source: _source, ...event } = k8sEvent(agent.id, stack.id, 'node-x', {
      involved_object: { api_version: 'v1', kind: 'Node', name: 'node-x' },
    });
    ws.send('k8s_event', event);
    const ev = await eventually(async () => (await events(stack.id)).events![0], { what: 'the event' });
    expect(ev.source).to.equal(null);
    expect(ev.involved_object).to.deep.equal({ api_version: 'v1', kind: 'Node', namespace: null, name: 'node-x', uid: null });
  });

  it("is written only by agents that target the stack: another agent's frames, a foreign agent_id and frames after the target is removed are dropped", async () => {
    const { stack, agent, gen } = await targetedStack(api.admin);
    const other = await targetedStack(api.admin);
    // `other.agent` also targets a second stack of its own, used as its ordering marker.
    const a = track(await WsAgent.connect(api.url, agent.pak));
    const b = track(await WsAgent.connect(api.url, other.agent.pak));

    b.send('pod_log_line', logLine(other.agent.id, stack.id, 'intruder'));
    b.send('k8s_event', k8sEvent(other.agent.id, stack.id, 'intruder'));
    b.send('pod_log_line', logLine(other.agent.id, other.stack.id, 'b-marker'));
    a.send('pod_log_line', logLine(other.agent.id, stack.id, 'spoofed agent_id'));
    a.send('pod_log_line', { ...logLine(agent.id, stack.id, 'bad'), ts: 'yesterday' });
    a.send('pod_log_line', { agent_id: agent.id, stack_id: stack.id, line: 'missing fields' });
    a.send('pod_log_line', logLine(agent.id, stack.id, 'a-marker'));
    await stored(other.stack.id, 'b-marker');
    await stored(stack.id, 'a-marker');
    expect((await logs(stack.id)).lines!.map((l) => l.line)).to.deep.equal(['a-marker']);
    expect((await events(stack.id)).events).to.deep.equal([]);

    // Removing the target stops the agent's writes as soon as the wake-up hint drops the cached association.
    const second = await createStack(gen.client, { generator_id: gen.generator.id });
    expect((await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: second.id })).status).to.equal(201);
    expect((await api.admin.delete(`/agents/${agent.id}/targets/${stack.id}`)).status).to.equal(204);
    let round = 0;
    await eventually(
      async () => {
        round += 1;
        a.send('pod_log_line', logLine(agent.id, stack.id, `probe ${round}`));
        a.send('pod_log_line', logLine(agent.id, second.id, `marker ${round}`));
        await stored(second.id, `marker ${round}`);
        return !(await logs(stack.id)).lines!.some((l) => l.line === `probe ${round}`);
      },
      { what: 'writes refused after the target was removed' },
    );
    a.send('pod_log_line', logLine(agent.id, stack.id, 'after removal'));
    a.send('pod_log_line', logLine(agent.id, second.id, 'second-marker'));
    await stored(second.id, 'second-marker');
    expect((await logs(stack.id)).lines!.map((l) => l.line)).to.not.include('after removal');
  });

  it('limits log lines per container: the excess is dropped and reported live as log_gap with the real count (never stored)', async () => {
    const { stack, agent } = await targetedStack(api.admin);
    const live = track(await Consumer.open(api.url, `/api/v1/stacks/${stack.id}/live`, { header: api.adminPak }));
    const ws = track(await WsAgent.connect(api.url, agent.pak));
    const sent = 600;
    for (let i = 0; i < sent; i++) ws.send('pod_log_line', logLine(agent.id, stack.id, `burst ${i}`, 'noisy'));
    ws.send('pod_log_line', logLine(agent.id, stack.id, 'quiet-marker', 'quiet'));
    await stored(stack.id, 'quiet-marker');
    const kept = (await logs(stack.id, { limit: '5000' })).lines!.filter((l) => l.container === 'noisy').length;
    expect(kept, 'the burst went over 100 lines in a second').to.be.lessThan(sent);
    expect(kept).to.be.at.least(100);
    await eventually(
      () => {
        const gaps = live.frames.filter((f) => f.type === 'log_gap');
        return gaps.reduce((n, g) => n + (g.body.dropped_count as number), 0) === sent - kept;
      },
      { what: 'log_gap frames counting every dropped line' },
    );
    const gap = live.frames.find((f) => f.type === 'log_gap')!;
    expect(gap.body).to.include({ agent_id: agent.id, stack_id: stack.id, reason: 'rate_limit' });
  });

  it("an agent's own log_gap frame reaches live subscribers and is not stored", async () => {
    const { stack, agent } = await targetedStack(api.admin);
    const live = track(await Consumer.open(api.url, `/api/v1/stacks/${stack.id}/live`, { header: api.adminPak }));
    const ws = track(await WsAgent.connect(api.url, agent.pak));
    const gap = { agent_id: agent.id, stack_id: stack.id, since_ts: new Date().toISOString(), dropped_count: 7, reason: 'rate_limit' };
    ws.send('log_gap', gap);
    expect((await live.waitFor((f) => f.type === 'log_gap', 'log_gap')).body).to.deep.equal(gap);
    expect((await logs(stack.id)).lines).to.deep.equal([]);
  });

  describe('GET /stacks/{id}/events and /logs', () => {
    it('serve only the last 6 hours of ingestion, whatever `since` says; oldest_available_ts is the oldest retained row', async () => {
      const { stack, agent } = await targetedStack(api.admin);
      const insert = (age: string, line: string) =>
        api.sql.query(
          `INSERT INTO agent_pod_logs (agent_id, stack_id, namespace, pod, container, ts, line, created_at)
           VALUES ($1, $2, 'default', 'p', 'c', now(), $3, now() - $4::interval)`,
          [agent.id, stack.id, line, age],
        );
      await insert('7 hours', 'too old');
      await insert('5 hours', 'five hours');
      await insert('1 minute', 'fresh');
      const page = await logs(stack.id, { since: '2000-01-01T00:00:00Z' });
      expect(page.lines!.map((l) => l.line)).to.deep.equal(['fresh', 'five hours']);
      expect(page.retention.oldest_available_ts).to.equal(page.lines![1]!.created_at);
      // `since` narrows the window; limit 1 keeps the newest.
      expect((await logs(stack.id, { since: new Date(Date.now() - 3_600_000).toISOString() })).lines!.map((l) => l.line)).to.deep.equal([
        'fresh',
      ]);
      expect((await logs(stack.id, { limit: '1' })).lines!.map((l) => l.line)).to.deep.equal(['fresh']);
      // Brokkr clamps: 0 and negative limits become 1, huge ones 5000.
      expect((await logs(stack.id, { limit: '0' })).lines).to.have.length(1);
      expect((await logs(stack.id, { limit: '-20' })).lines).to.have.length(1);
      expect((await logs(stack.id, { limit: '99999999' })).lines).to.have.length(2);
      expect((await logs(stack.id, { since: new Date(Date.now() + 60_000).toISOString() })).lines).to.deep.equal([]);
    });

    it('a stack with nothing streamed: empty lists and oldest_available_ts null', async () => {
      const gen = await createGenerator(api.admin);
      const stack = await createStack(gen.client, { generator_id: gen.generator.id });
      expect(await events(stack.id)).to.deep.equal({
        retention: {
          retention_ceiling_seconds: 21600,
          effective_retention_seconds: 21600,
          oldest_available_ts: null,
          long_term_sink_hint: HINT,
        },
        events: [],
      });
      expect((await logs(stack.id)).lines).to.deep.equal([]);
    });

    it('admin or the owning generator; 403 stack_not_owned for another generator or an agent; 404 for a missing or deleted stack; 400 on bad query values', async () => {
      const { stack, agent, gen } = await targetedStack(api.admin);
      const stranger = await createGenerator(api.admin);
      for (const path of [`/stacks/${stack.id}/events`, `/stacks/${stack.id}/logs`]) {
        expect((await gen.client.get(path)).status).to.equal(200);
        expect((await api.admin.get(path)).status).to.equal(200);
        const foreign = await stranger.client.get(path);
        expect([foreign.status, foreign.body.code]).to.deep.equal([403, 'stack_not_owned']);
        const asAgent = await agent.client.get(path);
        expect([asAgent.status, asAgent.body.code]).to.deep.equal([403, 'stack_not_owned']);
        for (const query of [{ since: 'yesterday' }, { limit: 'ten' }, { limit: '1.5' }]) {
          const bad = await api.admin.get(path, { query });
          expect([bad.status, bad.body.code]).to.deep.equal([400, 'invalid_query']);
        }
      }
      const missing = await api.admin.get('/stacks/00000000-0000-4000-8000-000000000000/logs');
      expect([missing.status, missing.body.code]).to.deep.equal([404, 'stack_not_found']);
      expect((await api.admin.delete(`/stacks/${stack.id}`)).status).to.equal(204);
      const deleted = await api.admin.get(`/stacks/${stack.id}/events`);
      expect([deleted.status, deleted.body.code]).to.deep.equal([404, 'stack_not_found']);
    });
  });
});

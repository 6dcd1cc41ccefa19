import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { connect } from '@nats-io/transport-node';
import { testOnlyNatsOptions, useTestInfra } from '@brokkr/testkit';
import { adminGeneratorId, ApiClient, createAgent, createStack, startTestApi, type ApiProcess, type TestApi } from './support/index.ts';
import { upgradeStatus, WsAgent } from './support/ws-agent.ts';

const NIL = '00000000-0000-0000-0000-000000000000';
const now = () => new Date().toISOString();

/** Black-box tests of `/internal/ws/agent` over real sockets, against two api replicas on one database and NATS. */
describe('ws agent channel (/internal/ws/agent)', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;
  const sockets: WsAgent[] = [];
  const open = async (url: string, pak: string) => {
    const s = await WsAgent.connect(url, pak);
    sockets.push(s);
    return s;
  };

  before(async () => {
    // A long cache TTL: only the cross-replica invalidation can close a socket after a rotation.
    api = await startTestApi(infra, { env: { BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '300' } });
    replica = await api.spawnReplica();
  });
  afterEach(() => sockets.splice(0).forEach((s) => s.close()));
  after(() => api?.stop());

  let adminGenerator: string | undefined;
  async function activeAgent() {
    adminGenerator ??= await adminGeneratorId(api.admin);
    // Registered with the admin-generator, so admin may target its stacks at the agent.
    const created = await createAgent(api.admin, { generator_ids: [adminGenerator] });
    expect((await api.admin.put(`/agents/${created.agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    return { id: created.agent.id, pak: created.initial_pak };
  }

  async function objectOf(stackId: string) {
    const res = await api.admin.post<{ id: string }>(`/stacks/${stackId}/deployment-objects`, { yaml_content: 'a: 1\n' });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  describe('upgrade', () => {
    it('401 without a PAK or with a bad one, 403 for an admin or generator PAK, 101 for an agent PAK (Bearer or bare)', async () => {
      const agent = await activeAgent();
      expect(await upgradeStatus(api.url, undefined)).to.equal(401);
      expect(await upgradeStatus(api.url, 'brokkr_BRnotreal_xxxxxxxxxxxxxxxxxxxxxxxx')).to.equal(401);
      expect(await upgradeStatus(api.url, api.adminPak)).to.equal(403);
      expect(await upgradeStatus(api.url, agent.pak)).to.equal(101);
      expect(await upgradeStatus(api.url, undefined, '/internal/ws/agent', { authorization: agent.pak })).to.equal(101);
    });

    it('takes no credential from the subprotocol on the agent endpoint (401)', async () => {
      const agent = await activeAgent();
      expect(
        await upgradeStatus(api.url, undefined, '/internal/ws/agent', { 'sec-websocket-protocol': `brokkr.v1, brokkr.pak.${agent.pak}` }),
      ).to.equal(401);
    });

    it('a plain GET (no upgrade) is 401 without a PAK, 400 with one', async () => {
      const agent = await activeAgent();
      expect((await fetch(`${api.url}/internal/ws/agent`)).status).to.equal(401);
      const res = await fetch(`${api.url}/internal/ws/agent`, { headers: { authorization: `Bearer ${agent.pak}` } });
      expect(res.status).to.equal(400);
    });

    it('GET /admin/ws/connections lists the sockets of the replica that answers', async () => {
      const agent = await activeAgent();
      const s = await open(replica.url, agent.pak);
      s.send('heartbeat', { agent_id: agent.id, sent_at: now(), k8s_reachable: true, k8s_api_latency_ms: 3 });
      const onReplica = new ApiClient(replica.url, api.adminPak);
      let row: { agent_id: string; messages_in: number } | undefined;
      for (let i = 0; i < 50 && !(row && row.messages_in >= 1); i++) {
        const res = await onReplica.get<{
          connected_agents: number;
          connections: { agent_id: string; messages_in: number }[];
          live_subscribers: number;
        }>('/admin/ws/connections');
        expect(res.status).to.equal(200);
        row = res.body.connections.find((c) => c.agent_id === agent.id);
        if (!row?.messages_in) await new Promise((r) => setTimeout(r, 100));
      }
      expect(row?.messages_in).to.equal(1);
      const first = await api.admin.get<{ connections: { agent_id: string }[] }>('/admin/ws/connections');
      expect(first.body.connections.map((c) => c.agent_id)).to.not.include(agent.id);
      expect((await api.admin.as(agent.pak).get('/admin/ws/connections')).status).to.equal(403);
    });
  });

  describe('hints (from the NATS wake-ups, across replicas)', () => {
    it('target_changed, stack_changed and work_order reach an agent connected to the other replica', async () => {
      const agent = await activeAgent();
      const s = await open(replica.url, agent.pak);
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });

      expect((await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
      const target = await s.waitFor((f) => f.type === 'target_changed', 'target_changed');
      expect(target.body).to.deep.equal({ id: NIL, agent_id: agent.id, stack_id: NIL });

      await objectOf(stack.id);
      const changed = await s.waitFor((f) => f.type === 'stack_changed', 'stack_changed');
      expect(changed.body).to.include({ id: stack.id, name: stack.name, generator_id: stack.generator_id, deleted_at: null });
      expect(changed.body).to.have.all.keys('id', 'created_at', 'updated_at', 'deleted_at', 'name', 'description', 'generator_id');

      const order = await api.admin.post<{ id: string }>('/work-orders', {
        work_type: 'custom',
        yaml_content: 'x: 1',
        target_agent_ids: [agent.id],
      });
      expect(order.status).to.equal(201);
      const hint = await s.waitFor((f) => f.type === 'work_order', 'work_order');
      expect(hint.body).to.include({ id: order.body.id, status: 'PENDING', claimed_by: null, work_type: 'custom' });
    });

    it("the agent's own event report wakes no hint; the metrics count frames out", async () => {
      const agent = await activeAgent();
      const s = await open(replica.url, agent.pak);
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
      await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      await s.waitFor((f) => f.type === 'target_changed', 'target_changed');
      const objectId = await objectOf(stack.id);
      await s.waitFor((f) => f.type === 'stack_changed', 'stack_changed');
      const before = s.frames.length;
      const res = await api.admin.as(agent.pak).post(`/agents/${agent.id}/events`, {
        agent_id: agent.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status: 'SUCCESS',
      });
      expect(res.status).to.equal(201);
      // A later hint proves the earlier (ack) notice was processed first: NATS keeps one publisher's order.
      await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x: 1', target_agent_ids: [agent.id] });
      await s.waitFor((f) => f.type === 'work_order', 'work_order', 15_000, before);
      expect(s.frames.slice(before).map((f) => f.type)).to.deep.equal(['work_order']);
      const metrics = await (await fetch(`${replica.url}/metrics`)).text();
      expect(metrics).to.match(/brokkr_ws_messages_total\{[^}]*direction="out"[^}]*type="target_changed"[^}]*\} [1-9]/);
      expect(metrics).to.match(/brokkr_ws_connected_agents(\{[^}]*\})? [1-9]/);
    });
  });

  describe('closing on revocation (every replica)', () => {
    it('rotating the PAK closes the sockets on both replicas; the old PAK is then refused', async () => {
      const agent = await activeAgent();
      const a = await open(api.url, agent.pak);
      const b = await open(replica.url, agent.pak);
      const rotated = await api.admin.post<{ pak: string }>(`/agents/${agent.id}/rotate-pak`);
      expect(rotated.status).to.equal(200);
      await Promise.all([a.waitClosed(), b.waitClosed()]);
      expect(await upgradeStatus(replica.url, agent.pak)).to.equal(401);
      expect(await upgradeStatus(replica.url, rotated.body.pak)).to.equal(101);
    });

    it('deleting the agent closes its sockets on both replicas', async () => {
      const agent = await activeAgent();
      const a = await open(api.url, agent.pak);
      const b = await open(replica.url, agent.pak);
      expect((await api.admin.delete(`/agents/${agent.id}`)).status).to.equal(204);
      await Promise.all([a.waitClosed(), b.waitClosed()]);
    });

    it('another agent keeps its socket', async () => {
      const [one, two] = [await activeAgent(), await activeAgent()];
      const keep = await open(replica.url, two.pak);
      const gone = await open(replica.url, one.pak);
      await api.admin.post(`/agents/${one.id}/rotate-pak`);
      await gone.waitClosed();
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
      await api.admin.post(`/agents/${two.id}/targets`, { agent_id: two.id, stack_id: stack.id });
      await keep.waitFor((f) => f.type === 'target_changed', 'target_changed on the other socket');
    });
  });

  describe('uplinks have the effects of their REST twins', () => {
    it('heartbeat: last_heartbeat and the Kubernetes report', async () => {
      const agent = await activeAgent();
      const s = await open(replica.url, agent.pak);
      s.send('heartbeat', { agent_id: agent.id, sent_at: now(), k8s_reachable: false, k8s_api_latency_ms: null });
      const row = await poll(async () => {
        const { rows } = await api.sql.query('SELECT last_heartbeat, k8s_reachable FROM agents WHERE id = $1', [agent.id]);
        return rows[0]?.last_heartbeat ? rows[0] : undefined;
      });
      expect(row.k8s_reachable).to.equal(false);
    });

    it('agent_event: the row, the deployment.applied/failed event for webhooks, a mismatched agent dropped', async () => {
      const agent = await activeAgent();
      const other = await activeAgent();
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
      // Agents report only on objects they are served (agent-reports.test.ts).
      await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      const objectId = await objectOf(stack.id);
      const s = await open(replica.url, agent.pak);
      const event = (agentId: string, status: string, message: string | null) => ({
        id: NIL,
        created_at: now(),
        updated_at: now(),
        deleted_at: null,
        agent_id: agentId,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status,
        message,
      });
      s.send('agent_event', event(other.id, 'SUCCESS', 'not mine'));
      s.send('agent_event', event(agent.id, 'SUCCESS', null));
      s.send('agent_event', event(agent.id, 'FAILURE', 'boom'));
      const rows = await poll(async () => {
        const { rows } = await api.sql.query<{ status: string; agent_id: string; id: string }>(
          'SELECT id, status, agent_id FROM agent_events WHERE deployment_object_id = $1 ORDER BY created_at',
          [objectId],
        );
        return rows.length >= 2 ? rows : undefined;
      });
      expect(rows.map((r) => [r.agent_id, r.status])).to.deep.equal([
        [agent.id, 'SUCCESS'],
        [agent.id, 'FAILURE'],
      ]);
      const { rows: outbox } = await api.sql.query<{ event_type: string; id: string }>(
        "SELECT event_type, payload->'data'->>'agent_event_id' AS id FROM outbox WHERE payload->'data'->>'deployment_object_id' = $1 AND event_type LIKE 'deployment.%ed' AND event_type <> 'deployment.created' ORDER BY created_at",
        [objectId],
      );
      expect(outbox.map((o) => [o.event_type, o.id])).to.deep.equal([
        ['deployment.applied', rows[0]!.id],
        ['deployment.failed', rows[1]!.id],
      ]);
      // The REST read sees them like REST-reported ones.
      const listed = await api.admin.as(agent.pak).get<{ status: string }[]>(`/agents/${agent.id}/events`);
      expect(listed.body.map((e) => e.status).sort()).to.deep.equal(['FAILURE', 'SUCCESS']);
    });

    it('agent_health: upserted with the summary string as an object; an unknown status is dropped like REST rejects it', async () => {
      const agent = await activeAgent();
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
      await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      const objectId = await objectOf(stack.id);
      const s = await open(api.url, agent.pak);
      const health = (status: string) => ({
        id: NIL,
        agent_id: agent.id,
        deployment_object_id: objectId,
        status,
        summary: JSON.stringify({ pods_ready: 1, pods_total: 2, conditions: ['ImagePullBackOff'], resources: [] }),
        checked_at: now(),
        created_at: now(),
        updated_at: now(),
      });
      s.send('agent_health', health('sideways'));
      s.send('agent_health', health('degraded'));
      const res = await poll(async () => {
        const r = await api.admin.get<{ health_records: { status: string; summary: unknown }[] }>(`/deployment-objects/${objectId}/health`);
        return r.body.health_records.length ? r.body : undefined;
      });
      expect(res.health_records).to.have.length(1);
      expect(res.health_records[0]!.status).to.equal('degraded');
      const summary = res.health_records[0]!.summary;
      expect(typeof summary === 'string' ? JSON.parse(summary) : summary).to.deep.include({ pods_ready: 1, pods_total: 2 });
    });

    it('undecodable, unknown and binary frames are dropped and the connection stays open', async () => {
      const agent = await activeAgent();
      const s = await open(replica.url, agent.pak);
      s.ws.send('not json');
      s.ws.send(Buffer.from([1, 2, 3]));
      s.send('mystery', {});
      s.send('heartbeat', { agent_id: agent.id }); // sent_at missing
      s.send('stack_changed', { id: randomUUID() }); // downlink-only
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
      await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      await s.waitFor((f) => f.type === 'target_changed', 'target_changed after bad frames');
      const { rows } = await api.sql.query('SELECT last_heartbeat FROM agents WHERE id = $1', [agent.id]);
      expect(rows[0].last_heartbeat).to.equal(null);
    });
  });

  describe('lanes', () => {
    it('a consumer that stops reading loses hints (bounded) and never delays another agent', async () => {
      const slow = await activeAgent();
      const fast = await activeAgent();
      const stalled = await open(replica.url, slow.pak);
      const healthy = await open(replica.url, fast.pak);
      // Stop reading: the server's writes back up in the kernel buffers, then in the lanes.
      const rawSocket = (stalled.ws as unknown as { _socket: { pause(): void } })._socket;
      rawSocket.pause();
      const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
      const nc = await connect(testOnlyNatsOptions(api.natsUrl));
      try {
        // Stack hints are not coalesced: 3000 of them, large enough to fill socket buffers and the control lane.
        for (let i = 0; i < 3000; i++)
          nc.publish(`brokkr.notify.agent.${slow.id}`, JSON.stringify({ agent_id: slow.id, stack_id: stack.id }));
        await nc.flush();
      } finally {
        await nc.close();
      }
      await api.admin.post(`/agents/${fast.id}/targets`, { agent_id: fast.id, stack_id: stack.id });
      await healthy.waitFor((f) => f.type === 'target_changed', 'target_changed for the healthy agent');
      const dropped = await poll(async () => {
        const text = await (await fetch(`${replica.url}/metrics`)).text();
        const m = /brokkr_ws_frames_dropped_total\{[^}]*direction="out"[^}]*lane="control"[^}]*\} (\d+)/.exec(text);
        return m && Number(m[1]) > 0 ? Number(m[1]) : undefined;
      });
      expect(dropped).to.be.greaterThan(0);
      // Reading again, the stalled agent gets what its lanes kept, and the socket still works.
      (stalled.ws as unknown as { _socket: { resume(): void } })._socket.resume();
      await stalled.waitFor((f) => f.type === 'stack_changed', 'kept stack_changed frames');
      expect(stalled.frames.length).to.be.lessThan(3000);
    });
  });
});

async function poll<T>(read: () => Promise<T | undefined>, deadlineMs = 15_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 100));
  }
}

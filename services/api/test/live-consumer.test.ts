import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { ApiClient, createGenerator, createStack, startTestApi, type ApiProcess, type TestApi } from './support/index.ts';
import { Consumer, k8sEvent, logLine, now, targetedStack } from './support/cluster-events.ts';
import { WsAgent } from './support/ws-agent.ts';

/**
 * The consumer sockets `/api/v1/stacks/{id}/live` and `/api/v1/fleet/live` over real WebSockets,
 * against two api processes on one database and NATS: what an agent streams to one replica
 * reaches subscribers of the other.
 */
describe('live consumer sockets (/stacks/{id}/live, /fleet/live)', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;
  const sockets: { close(): void }[] = [];
  const track = <T extends { close(): void }>(s: T) => (sockets.push(s), s);

  before(async () => {
    // A long cache TTL: only the cross-replica invalidation can close a socket after a rotation.
    api = await startTestApi(infra, { env: { BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '300' } });
    replica = await api.spawnReplica();
  });
  afterEach(() => sockets.splice(0).forEach((s) => s.close()));
  after(() => api?.stop());

  describe('/api/v1/stacks/{id}/live', () => {
    it('forwards the frames an agent streams to the other replica, unchanged', async () => {
      const { stack, agent, gen } = await targetedStack(api.admin);
      const viaHeader = track(await Consumer.open(replica.url, `/api/v1/stacks/${stack.id}/live`, { header: api.adminPak }));
      const viaSubprotocol = track(await Consumer.open(replica.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: gen.pak }));
      const ws = track(await WsAgent.connect(api.url, agent.pak));
      const event = k8sEvent(agent.id, stack.id, 'web-1');
      const line = logLine(agent.id, stack.id, 'hello from the pod');
      ws.send('k8s_event', event);
      ws.send('pod_log_line', line);
      for (const consumer of [viaHeader, viaSubprotocol]) {
        expect((await consumer.waitFor((f) => f.type === 'k8s_event', 'k8s_event')).body).to.deep.equal(event);
        expect((await consumer.waitFor((f) => f.type === 'pod_log_line', 'pod_log_line')).body).to.deep.equal(line);
      }
    });

    it("subscribers of another stack hear nothing of this one's frames", async () => {
      const first = await targetedStack(api.admin);
      const second = await targetedStack(api.admin);
      const other = track(await Consumer.open(replica.url, `/api/v1/stacks/${second.stack.id}/live`, { header: api.adminPak }));
      const mine = track(await Consumer.open(replica.url, `/api/v1/stacks/${first.stack.id}/live`, { header: api.adminPak }));
      const ws1 = track(await WsAgent.connect(api.url, first.agent.pak));
      const ws2 = track(await WsAgent.connect(api.url, second.agent.pak));
      ws1.send('pod_log_line', logLine(first.agent.id, first.stack.id, 'first'));
      await mine.waitFor((f) => f.body.line === 'first', 'the first stack line');
      ws2.send('pod_log_line', logLine(second.agent.id, second.stack.id, 'second'));
      await other.waitFor((f) => f.body.line === 'second', 'the second stack line');
      expect(other.frames.map((f) => f.body.line)).to.deep.equal(['second']);
    });

    it('subprotocol auth selects exactly brokkr.v1; bad PAK 401, agent or foreign generator 403, missing stack 404, bad id 400', async () => {
      const { stack, agent, gen } = await targetedStack(api.admin);
      const stranger = await createGenerator(api.admin);
      const path = `/api/v1/stacks/${stack.id}/live`;
      const consumer = track(await Consumer.open(api.url, path, { subprotocol: gen.pak }));
      expect(consumer.protocol).to.equal('brokkr.v1');
      expect(await Consumer.status(api.url, path, { subprotocol: 'brokkr_BRnotreal_xxxxxxxxxxxxxxxxxxxxxxxx' })).to.equal(401);
      expect(await Consumer.status(api.url, path, {})).to.equal(401);
      expect(await Consumer.status(api.url, path, { subprotocol: agent.pak })).to.equal(403);
      expect(await Consumer.status(api.url, path, { subprotocol: stranger.pak })).to.equal(403);
      expect(await Consumer.status(api.url, path, { header: api.adminPak })).to.equal(101);
      expect(await Consumer.status(api.url, '/api/v1/stacks/00000000-0000-4000-8000-000000000000/live', { header: api.adminPak })).to.equal(
        404,
      );
      expect(await Consumer.status(api.url, '/api/v1/stacks/not-a-uuid/live', { header: api.adminPak })).to.equal(400);
    });

    it('GET /admin/ws/connections counts the per-stack subscribers of the replica that answers (fleet subscribers not included)', async () => {
      const { stack } = await targetedStack(api.admin);
      const onReplica = new ApiClient(replica.url, api.adminPak);
      const count = async () => (await onReplica.get<{ live_subscribers: number }>('/admin/ws/connections')).body.live_subscribers;
      // Sockets of earlier tests may still be closing, so the count is only ever compared downwards.
      const a = track(await Consumer.open(replica.url, `/api/v1/stacks/${stack.id}/live`, { header: api.adminPak }));
      const b = track(await Consumer.open(replica.url, `/api/v1/stacks/${stack.id}/live`, { header: api.adminPak }));
      const withTwo = await count();
      expect(withTwo).to.be.at.least(2);
      track(await Consumer.open(replica.url, '/api/v1/fleet/live', { header: api.adminPak }));
      expect(await count()).to.be.at.most(withTwo);
      a.close();
      b.close();
      await eventually(async () => (await count()) <= withTwo - 2, { what: 'both subscribers gone from the count' });
    });

    it("is closed on every replica when the subscriber's PAK is rotated (Brokkr leaves it open)", async () => {
      const gen = await createGenerator(api.admin);
      const stack = await createStack(gen.client, { generator_id: gen.generator.id });
      const onReplica = track(await Consumer.open(replica.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: gen.pak }));
      const onFirst = track(await Consumer.open(api.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: gen.pak }));
      const rotated = await api.admin.post(`/generators/${gen.generator.id}/rotate-pak`);
      expect(rotated.status, rotated.text).to.equal(201);
      await onReplica.waitClosed();
      await onFirst.waitClosed();
      expect(await Consumer.status(replica.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: gen.pak })).to.equal(401);
    });
  });

  describe('/api/v1/fleet/live', () => {
    it('admin only (403 for a generator or agent PAK), subprotocol answered with brokkr.v1', async () => {
      const { agent, gen } = await targetedStack(api.admin);
      expect(await Consumer.status(api.url, '/api/v1/fleet/live', { subprotocol: gen.pak })).to.equal(403);
      expect(await Consumer.status(api.url, '/api/v1/fleet/live', { header: agent.pak })).to.equal(403);
      const consumer = track(await Consumer.open(api.url, '/api/v1/fleet/live', { subprotocol: api.adminPak }));
      expect(consumer.protocol).to.equal('brokkr.v1');
    });

    it('a subscriber that stops reading blocks neither heartbeats nor the other subscribers (Brokkr integration case)', async () => {
      const { agent } = await targetedStack(api.admin);
      const slow = track(await Consumer.open(api.url, '/api/v1/fleet/live', { header: api.adminPak }));
      slow.ws.pause();
      const fast = track(await Consumer.open(api.url, '/api/v1/fleet/live', { header: api.adminPak }));
      for (let i = 1; i <= 100; i++) {
        const res = await agent.client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, k8s_api_latency_ms: i });
        expect(res.status).to.equal(204);
      }
      await fast.waitFor(
        (f) => f.body.agent_id === agent.id && f.body.k8s_api_latency_ms === 100,
        'the last heartbeat on the fast subscriber',
      );
    });

    it("pushes the agent's new backlog when a deployment object lands in a stack it targets (the hub's wake-up hint)", async () => {
      const { agent, stack } = await targetedStack(api.admin);
      const fleet = track(await Consumer.open(replica.url, '/api/v1/fleet/live', { header: api.adminPak }));
      expect((await api.admin.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' })).status).to.equal(201);
      const update = await fleet.waitFor(
        (f) => f.type === 'fleet_update' && f.body.agent_id === agent.id && f.body.pending_object_count === 1,
        'fleet_update with the pending object',
      );
      expect(Object.keys(update.body)).to.have.length(17);
    });

    it('pushes fleet_update across replicas on a REST heartbeat, and on channel connect and disconnect; GET /fleet on either replica reports the channel', async () => {
      const { agent } = await targetedStack(api.admin);
      const fleet = track(await Consumer.open(replica.url, '/api/v1/fleet/live', { header: api.adminPak }));
      const mine = (f: { type: string; body: Record<string, unknown> }) => f.type === 'fleet_update' && f.body.agent_id === agent.id;

      expect((await agent.client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, k8s_api_latency_ms: 12 })).status).to.equal(
        204,
      );
      const beat = await fleet.waitFor((f) => mine(f) && f.body.k8s_api_latency_ms === 12, 'fleet_update after the REST heartbeat');
      expect(Object.keys(beat.body)).to.have.length(17);
      expect(beat.body).to.include({ ws_connected: false, connected_since: null, k8s_reachable: true });

      const ws = track(await WsAgent.connect(api.url, agent.pak));
      const up = await fleet.waitFor((f) => mine(f) && f.body.ws_connected === true, 'fleet_update ws_connected:true');
      expect(up.body.connected_since).to.be.a('string');
      ws.send('heartbeat', { agent_id: agent.id, sent_at: now(), k8s_reachable: true, k8s_api_latency_ms: 5 });
      await fleet.waitFor((f) => mine(f) && f.body.k8s_api_latency_ms === 5, 'fleet_update after the channel heartbeat');
      for (const url of [api.url, replica.url]) {
        const row = (await new ApiClient(url, api.adminPak).get<Record<string, unknown>[]>('/fleet')).body.find(
          (r) => r.agent_id === agent.id,
        );
        expect(row, url).to.include({ ws_connected: true, connected_since: up.body.connected_since });
      }

      const before = fleet.frames.length;
      ws.close();
      await fleet.waitFor(
        (f) => fleet.frames.indexOf(f) >= before && mine(f) && f.body.ws_connected === false,
        'fleet_update ws_connected:false',
      );
      const row = (await new ApiClient(replica.url, api.adminPak).get<Record<string, unknown>[]>('/fleet')).body.find(
        (r) => r.agent_id === agent.id,
      );
      expect(row).to.include({ ws_connected: false, connected_since: null });
    });
  });
});

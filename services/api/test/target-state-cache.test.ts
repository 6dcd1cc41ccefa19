import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { ApiClient, createAgent, createGenerator, createStack, startTestApi, type ApiProcess, type TestApi } from './support/index.ts';
import { WsAgent } from './support/ws-agent.ts';

interface Served {
  status: number;
  etag: string;
  ids: string[];
}

/**
 * Target-state answers come from a per-replica cache kept current by the agents' wake-ups
 * (resources/target-state/answer-cache.ts). Two api processes share PostgreSQL and NATS; writes go
 * to one, agents read from the other right after the write was acknowledged, so any answer from
 * before the write would show. Where the answer came from is read from
 * brokkr_target_state_reads_total{source}.
 */
describe('api target state: the cache across replicas', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;
  let gen: { id: string; client: ApiClient };

  async function reads(url: string): Promise<Record<'memory' | 'patched' | 'database', number>> {
    const { text } = await new ApiClient(url, null).get('//metrics');
    const count = (source: string) =>
      Number(new RegExp(`^brokkr_target_state_reads_total\\{[^}]*source="${source}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { memory: count('memory'), patched: count('patched'), database: count('database') };
  }

  async function stackReads(url: string): Promise<number> {
    const { text } = await new ApiClient(url, null).get('//metrics');
    return Number(/^brokkr_target_state_stack_reads_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
  }

  /** An ACTIVE agent registered with the generator, with a client on each process. */
  async function agent(): Promise<{ id: string; onApi: ApiClient; onReplica: ApiClient }> {
    const { agent, client } = await createAgent(api.admin, { generator_ids: [gen.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    return { id: agent.id, onApi: client, onReplica: new ApiClient(replica.url, client.pak) };
  }

  async function target(agentId: string, stackId: string): Promise<void> {
    const res = await api.admin.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stackId });
    expect(res.status, res.text).to.equal(201);
  }

  async function publish(stackId: string, version: string): Promise<string> {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "${version}"\n`;
    const res = await gen.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  async function served(client: ApiClient, agentId: string, opts: { full?: boolean; etag?: string } = {}): Promise<Served> {
    const res = await client.get(`/agents/${agentId}/target-state`, {
      query: opts.full === false ? {} : { mode: 'full' },
      headers: opts.etag ? { 'if-none-match': opts.etag } : {},
    });
    expect(res.status, res.text).to.be.oneOf([200, 304]);
    const ids = res.status === 200 ? (res.body as { id: string }[]).map((o) => o.id) : [];
    return { status: res.status, etag: res.headers.get('etag')!, ids };
  }

  before(async () => {
    api = await startTestApi(infra);
    replica = await api.spawnReplica();
    const created = await createGenerator(api.admin);
    gen = { id: created.generator.id, client: created.client };
  });
  after(() => api?.stop());

  it('answers an unchanged ETag from memory, without reading the database', async () => {
    const a = await agent();
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(a.id, stack.id);
    await publish(stack.id, '1');
    const first = await served(a.onReplica, a.id);
    const before = await reads(replica.url);
    for (let i = 0; i < 3; i++) expect((await served(a.onReplica, a.id, { etag: first.etag })).status).to.equal(304);
    const after = await reads(replica.url);
    expect(after.memory - before.memory).to.equal(3);
    expect(after.database - before.database).to.equal(0);
  });

  it('a new object is served by the other replica as soon as its POST was answered', async () => {
    const a = await agent();
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(a.id, stack.id);
    let held = await served(a.onReplica, a.id);
    for (let version = 1; version <= 10; version++) {
      const id = await publish(stack.id, String(version));
      const now = await served(a.onReplica, a.id, { etag: held.etag });
      expect(now.status, `version ${version}`).to.equal(200);
      expect(now.ids, `version ${version}`).to.deep.equal([id]);
      held = now;
    }
  });

  it('a new object is served by the writing replica too as soon as its POST was answered (it hears its own wake-ups at once)', async () => {
    const a = await agent();
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(a.id, stack.id);
    let held = await served(a.onApi, a.id);
    for (let version = 1; version <= 10; version++) {
      const id = await publish(stack.id, String(version));
      const now = await served(a.onApi, a.id, { etag: held.etag });
      expect(now.status, `version ${version}`).to.equal(200);
      expect(now.ids, `version ${version}`).to.deep.equal([id]);
      held = now;
    }
  });

  it('reads a stack changed for many agents once, not once per agent (patched answers)', async () => {
    const agents = await Promise.all([agent(), agent(), agent(), agent()]);
    const shared = await createStack(gen.client, { generator_id: gen.id });
    const own = await Promise.all(agents.map(() => createStack(gen.client, { generator_id: gen.id })));
    const ownObjects: string[] = [];
    for (const [i, a] of agents.entries()) {
      await target(a.id, shared.id);
      await target(a.id, own[i]!.id);
      ownObjects.push(await publish(own[i]!.id, `own-${i}`));
    }
    await publish(shared.id, '1');
    const held = await Promise.all(agents.map((a) => served(a.onReplica, a.id)));
    const before = await reads(replica.url);
    const id = await publish(shared.id, '2');
    for (const [i, a] of agents.entries()) {
      const now = await served(a.onReplica, a.id, { etag: held[i]!.etag });
      expect(now.status).to.equal(200);
      expect(now.ids, 'the newest object first').to.deep.equal([id, ownObjects[i]]);
      // The same answer the database gives.
      const fresh = await served(a.onApi, a.id);
      expect(now.ids).to.deep.equal(fresh.ids);
      expect(now.etag).to.equal(fresh.etag);
    }
    const after = await reads(replica.url);
    expect(after.patched - before.patched).to.equal(agents.length);
    expect(after.database - before.database).to.equal(0);
  });

  it('patches a stack rendered per agent too: each agent gets its own render, from one read of the stack', async () => {
    const agents = await Promise.all([agent(), agent(), agent()]);
    const stack = await createStack(gen.client, { generator_id: gen.id });
    for (const [i, a] of agents.entries()) {
      const res = await api.admin.post(`/agents/${a.id}/annotations`, { agent_id: a.id, key: 'region', value: `r${i}` });
      expect(res.status, res.text).to.equal(201);
      await target(a.id, stack.id);
    }
    await publish(stack.id, '1');
    const layer = await gen.client.post(`/stacks/${stack.id}/overrides`, {
      name: 'region',
      patches: [{ target: { kind: 'ConfigMap', name: 'app' }, merge_patch: { data: { region: '{{ agent.annotations.region }}' } } }],
    });
    expect(layer.status, layer.text).to.equal(201);
    const held = await Promise.all(agents.map((a) => served(a.onReplica, a.id)));
    const before = { reads: await reads(replica.url), stack: await stackReads(replica.url) };
    const id = await publish(stack.id, '2');
    for (const [i, a] of agents.entries()) {
      const res = await a.onReplica.get<{ id: string; yaml_content: string }[]>(`/agents/${a.id}/target-state`, {
        query: { mode: 'full' },
        headers: { 'if-none-match': held[i]!.etag },
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.map((o) => o.id)).to.deep.equal([id]);
      expect(res.body[0]!.yaml_content).to.include('version: "2"').and.include(`region: r${i}`);
      const fresh = await served(a.onApi, a.id);
      expect(res.headers.get('etag'), 'the same answer the database gives').to.equal(fresh.etag);
    }
    const after = { reads: await reads(replica.url), stack: await stackReads(replica.url) };
    expect(after.reads.patched - before.reads.patched).to.equal(agents.length);
    expect(after.reads.database - before.reads.database).to.equal(0);
    expect(after.stack - before.stack, 'one read of the stack for every agent').to.equal(1);
  });

  it('any other change to an agent (a new target) drops its cached answer on every replica', async () => {
    const a = await agent();
    const [one, two] = [await createStack(gen.client, { generator_id: gen.id }), await createStack(gen.client, { generator_id: gen.id })];
    await target(a.id, one.id);
    const first = await publish(one.id, '1');
    const second = await publish(two.id, '1');
    const held = await served(a.onReplica, a.id);
    expect(held.ids).to.deep.equal([first]);
    await target(a.id, two.id);
    const now = await served(a.onReplica, a.id, { etag: held.etag });
    expect(now.status).to.equal(200);
    expect(now.ids).to.deep.equal([second, first]);
  });

  it('incremental mode stays exact: a success drops the object at once, a failure keeps it', async () => {
    const a = await agent();
    const [one, two] = [await createStack(gen.client, { generator_id: gen.id }), await createStack(gen.client, { generator_id: gen.id })];
    await target(a.id, one.id);
    await target(a.id, two.id);
    const first = await publish(one.id, '1');
    const second = await publish(two.id, '1');
    const held = await served(a.onReplica, a.id, { full: false });
    expect(held.ids).to.deep.equal([second, first]);
    const report = (objectId: string, status: string) =>
      a.onApi.post(`/agents/${a.id}/events`, {
        agent_id: a.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status,
        message: status,
      });
    expect((await report(first, 'SUCCESS')).status).to.equal(201);
    expect((await report(second, 'FAILURE')).status).to.equal(201);
    const now = await served(a.onReplica, a.id, { full: false, etag: held.etag });
    expect(now.status).to.equal(200);
    expect(now.ids).to.deep.equal([second]);
    // Full mode still holds both; a new object for the applied stack comes back in incremental mode.
    expect((await served(a.onReplica, a.id)).ids).to.deep.equal([second, first]);
    const third = await publish(one.id, '2');
    expect((await served(a.onReplica, a.id, { full: false, etag: now.etag })).ids).to.deep.equal([third, second]);
  });

  it('an agent’s event report keeps its full answer in memory, unless the answer serves a deleted stack’s marker', async () => {
    const a = await agent();
    const [kept, deleted] = [
      await createStack(gen.client, { generator_id: gen.id }),
      await createStack(gen.client, { generator_id: gen.id }),
    ];
    await target(a.id, kept.id);
    await target(a.id, deleted.id);
    const object = await publish(kept.id, '1');
    await publish(deleted.id, '1');
    const report = (objectId: string) =>
      a.onApi.post(`/agents/${a.id}/events`, {
        agent_id: a.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status: 'SUCCESS',
        message: null,
      });
    const held = await served(a.onReplica, a.id);
    const before = await reads(replica.url);
    expect((await report(object)).status).to.equal(201);
    expect((await served(a.onReplica, a.id, { etag: held.etag })).status).to.equal(304);
    expect((await reads(replica.url)).database - before.database, 'the full answer did not depend on the report').to.equal(0);

    expect((await gen.client.delete(`/stacks/${deleted.id}`)).status).to.equal(204);
    const withMarker = await served(a.onReplica, a.id, { etag: held.etag });
    expect(withMarker.status).to.equal(200);
    const marker = withMarker.ids.find((id) => !held.ids.includes(id))!;
    expect((await report(marker)).status).to.equal(201);
    // The acknowledged deletion is gone for good: served by the replica right after the report was answered.
    const after = await served(a.onReplica, a.id, { etag: withMarker.etag });
    expect(after.status).to.equal(200);
    expect(after.ids).to.deep.equal([object]);
  });

  it('a rollout holds a cached agent on its baseline: a new object with a rollout is not patched in', async () => {
    const a = await agent();
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(a.id, stack.id);
    const baseline = await publish(stack.id, '1');
    const held = await served(a.onReplica, a.id);
    expect(held.ids).to.deep.equal([baseline]);
    const policy = { waves: [{ name: 'everyone', percent: 100, soak_seconds: 0 }], auto_rollback: false };
    expect((await gen.client.put(`/stacks/${stack.id}/rollout-policy`, policy)).status).to.equal(200);
    const next = await publish(stack.id, '2');
    // No maintenance process runs here: the rollout stays pending, so every agent stays on the baseline.
    const now = await served(a.onReplica, a.id, { etag: held.etag });
    expect(now.status).to.equal(304);
    expect((await served(a.onReplica, a.id)).ids).to.deep.equal([baseline]);
    expect((await served(a.onApi, a.id)).ids).to.deep.equal([baseline]);
    expect(next).to.not.equal(baseline);
  });

  describe('target_state_patch frames on the agent channel', () => {
    const sockets: WsAgent[] = [];
    afterEach(() => sockets.splice(0).forEach((s) => s.close()));
    const patchTaking = { 'brokkr-agent-features': 'target-state-patch' };

    async function socket(url: string, pak: string, headers: Record<string, string> = patchTaking): Promise<WsAgent> {
      const s = await WsAgent.connect(url, pak, '/internal/ws/agent', headers);
      sockets.push(s);
      return s;
    }

    it('carry the new object from the replica holding the socket, as a step from the ETag the agent holds', async () => {
      const a = await agent();
      const [shared, own] = [
        await createStack(gen.client, { generator_id: gen.id }),
        await createStack(gen.client, { generator_id: gen.id }),
      ];
      await target(a.id, shared.id);
      await target(a.id, own.id);
      const ownObject = await publish(own.id, 'own');
      await publish(shared.id, '1');
      const s = await socket(replica.url, a.onApi.pak!);
      const held = await served(a.onReplica, a.id);
      const before = await reads(replica.url);
      const id = await publish(shared.id, '2');
      const frame = await s.waitFor((f) => f.type === 'target_state_patch', 'a target_state_patch frame');
      const body = frame.body as { base_etag: string; etag: string; objects: { id: string; stack_id: string; yaml_content: string }[] };
      expect(body.base_etag).to.equal(held.etag);
      expect(body.objects.map((o) => [o.id, o.stack_id])).to.deep.equal([[id, shared.id]]);
      expect(body.objects[0]!.yaml_content).to.contain('version: "2"');
      // The step's ETag is the answer the database gives now, and the replica answers it from memory.
      const fresh = await served(a.onApi, a.id);
      expect(fresh.ids).to.deep.equal([id, ownObject]);
      expect(body.etag).to.equal(fresh.etag);
      expect((await served(a.onReplica, a.id, { etag: body.etag })).status).to.equal(304);
      const after = await reads(replica.url);
      expect(after.database - before.database, 'no database read for the agent on the replica').to.equal(0);
      expect(s.frames.map((f) => f.type)).to.not.include('stack_changed');
    });

    it('come from one read of the stack for all the agents it changed, though each agent’s step starts as its wake-up arrives', async () => {
      const agents = await Promise.all(Array.from({ length: 6 }, () => agent()));
      const stack = await createStack(gen.client, { generator_id: gen.id });
      for (const a of agents) await target(a.id, stack.id);
      await publish(stack.id, '1');
      const sockets = await Promise.all(agents.map((a) => socket(replica.url, a.onApi.pak!)));
      await Promise.all(agents.map((a) => served(a.onReplica, a.id)));
      const before = await stackReads(replica.url);
      const id = await publish(stack.id, '2');
      for (const s of sockets) {
        const frame = await s.waitFor((f) => f.type === 'target_state_patch', 'a target_state_patch frame');
        expect((frame.body as { objects: { id: string }[] }).objects.map((o) => o.id)).to.deep.equal([id]);
      }
      expect((await stackReads(replica.url)) - before).to.equal(1);
    });

    it('reach an agent on the writing replica once per change (its own wake-ups coming back from NATS are skipped)', async () => {
      const [a, plain] = [await agent(), await agent()];
      const stack = await createStack(gen.client, { generator_id: gen.id });
      await target(a.id, stack.id);
      await target(plain.id, stack.id);
      await publish(stack.id, '0');
      const s = await socket(api.url, a.onApi.pak!);
      const p = await socket(api.url, plain.onApi.pak!, {});
      await served(a.onApi, a.id);
      const ids: string[] = [];
      for (let version = 1; version <= 3; version++) {
        ids.push(await publish(stack.id, String(version)));
        await s.waitFor(
          (f) => f.type === 'target_state_patch' && JSON.stringify(f.body).includes(ids.at(-1)!),
          `the step to version ${version}`,
        );
      }
      // A frame sent for a copy would come after its round trip through NATS: a request to the other replica takes longer.
      await served(a.onReplica, a.id);
      expect(s.frames.map((f) => f.type)).to.deep.equal(['target_state_patch', 'target_state_patch', 'target_state_patch']);
      expect(p.frames.map((f) => f.type)).to.deep.equal(['stack_changed', 'stack_changed', 'stack_changed']);
    });

    it('chain when objects follow each other: each step starts where the previous one ended', async () => {
      const a = await agent();
      const stack = await createStack(gen.client, { generator_id: gen.id });
      await target(a.id, stack.id);
      await publish(stack.id, '0');
      const s = await socket(replica.url, a.onApi.pak!);
      let etag = (await served(a.onReplica, a.id)).etag;
      const ids: string[] = [];
      for (let version = 1; version <= 5; version++) ids.push(await publish(stack.id, String(version)));
      // Steps may merge notices, but every one starts from the previous one's ETag, and the last holds the last object.
      let last: string[] = [];
      while (last[0] !== ids.at(-1)) {
        const frame = await s.waitFor((f) => f.type === 'target_state_patch' && f.body.base_etag === etag, `a step from ${etag}`);
        const body = frame.body as { etag: string; objects: { id: string }[] };
        etag = body.etag;
        last = body.objects.map((o) => o.id);
      }
      expect((await served(a.onApi, a.id)).etag).to.equal(etag);
    });

    it('are not sent for an object too large to push to a fleet at once: the agent is hinted and fetches it', async () => {
      const a = await agent();
      const stack = await createStack(gen.client, { generator_id: gen.id });
      await target(a.id, stack.id);
      await publish(stack.id, '1');
      const s = await socket(replica.url, a.onApi.pak!);
      await served(a.onReplica, a.id);
      const big = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: "${'x'.repeat(70 * 1024)}"\n`;
      const res = await gen.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: big });
      expect(res.status, res.text).to.equal(201);
      await s.waitFor((f) => f.type === 'stack_changed', 'stack_changed for a large object');
      expect(s.frames.map((f) => f.type)).to.not.include('target_state_patch');
    });

    it('are not sent to an agent that did not ask for them (Brokkr’s agent keeps stack_changed), nor for a rollout', async () => {
      const plain = await agent();
      const stack = await createStack(gen.client, { generator_id: gen.id });
      await target(plain.id, stack.id);
      await publish(stack.id, '1');
      const s = await socket(replica.url, plain.onApi.pak!, {});
      await served(plain.onReplica, plain.id);
      await publish(stack.id, '2');
      await s.waitFor((f) => f.type === 'stack_changed', 'stack_changed');
      expect(s.frames.map((f) => f.type)).to.not.include('target_state_patch');

      const held = await agent();
      const rolled = await createStack(gen.client, { generator_id: gen.id });
      await target(held.id, rolled.id);
      await publish(rolled.id, '1');
      const r = await socket(replica.url, held.onApi.pak!);
      await served(held.onReplica, held.id);
      const policy = { waves: [{ name: 'everyone', percent: 100, soak_seconds: 0 }], auto_rollback: false };
      expect((await gen.client.put(`/stacks/${rolled.id}/rollout-policy`, policy)).status).to.equal(200);
      await publish(rolled.id, '2');
      // The agent stays on its baseline until its wave is released: it is told to fetch, not given the object.
      await r.waitFor((f) => f.type === 'stack_changed', 'stack_changed for an object under a rollout');
      expect(r.frames.map((f) => f.type)).to.not.include('target_state_patch');
    });
  });
});

import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  ApiClient,
  auditMessages,
  createAgent,
  createGenerator,
  createStack,
  startTestApi,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * Dependencies between stacks (docs/dependencies.md): a stack is not served to an agent until the
 * stacks it depends on are ready there (applied or healthy, on the same agent or fleet-wide), the
 * per-agent status says it waits and on what, cycles are refused at write. Black-box, through
 * HTTP; every target-state read goes through the api's cache of answers, so a release that
 * arrives proves the report woke the agent.
 */
describe('api stack dependencies', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  interface Agent {
    id: string;
    client: ApiClient;
  }
  interface Tenant {
    id: string;
    client: ApiClient;
  }

  const CM = (name: string, v = '1') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  v: "${v}"\n`;

  async function tenant(): Promise<Tenant> {
    const { generator, client } = await createGenerator(api.admin);
    return { id: generator.id, client };
  }

  const stackOf = async (t: Tenant) => (await createStack(t.client, { generator_id: t.id })).id;

  /** An active agent registered with the tenant and targeting `stacks`. */
  async function agentOf(t: Tenant, stacks: string[]): Promise<Agent> {
    const { agent, client } = await createAgent(api.admin);
    expect((await api.admin.post(`/generators/${t.id}/register`, { agent_id: agent.id })).status).to.equal(201);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const stack of stacks) {
      const res = await t.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack });
      expect(res.status, res.text).to.equal(201);
    }
    return { id: agent.id, client };
  }

  const postObject = async (t: Tenant, stack: string, v = '1') => {
    const res = await t.client.post<{ id: string }>(`/stacks/${stack}/deployment-objects`, { yaml_content: CM(`s-${stack}`, v) });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  };

  /** `how`: the ready_when, then the scope if any (`'applied fleet'`). */
  const depend = (t: Tenant, stack: string, on: string, how: string) => {
    const [readyWhen, scope] = how.split(' ');
    return t.client.post(`/stacks/${stack}/dependencies`, { stack_id: on, ready_when: readyWhen, ...(scope ? { scope } : {}) });
  };

  /** `how` as for depend; the stack waits for every stack of the tenant carrying all `labels`. */
  const dependOnSelector = (t: Tenant, stack: string, labels: string[], how: string) => {
    const [readyWhen, scope] = how.split(' ');
    return t.client.post<{ id: string; details?: unknown }>(`/stacks/${stack}/dependencies`, {
      selector: { labels },
      ready_when: readyWhen,
      ...(scope ? { scope } : {}),
    });
  };

  const label = async (t: Tenant, stack: string, text: string) => {
    const res = await t.client.post(`/stacks/${stack}/labels`, text);
    expect(res.status, res.text).to.equal(201);
  };

  /** Target-state requests the api holds now (its gauge: no timing is asserted). */
  async function longPollsWaiting(): Promise<number> {
    const { text } = await new ApiClient(api.url, null).get('//metrics');
    const match = /^brokkr_target_state_long_polls_waiting(?:\{[^}]*\})? (\d+)/m.exec(text);
    return match ? Number(match[1]) : 0;
  }

  /** The agent's full target state as it comes: each object's id, stack and whether it is a deletion marker. */
  async function fullState(agent: Agent): Promise<{ id: string; stack_id: string; is_deletion_marker: boolean }[]> {
    const res = await agent.client.get<{ id: string; stack_id: string; is_deletion_marker: boolean }[]>(
      `/agents/${agent.id}/target-state`,
      {
        query: { mode: 'full' },
      },
    );
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  /** The objects of the agent's full target state, by stack. */
  async function served(agent: Agent): Promise<Map<string, string>> {
    const res = await agent.client.get<{ id: string; stack_id: string }[]>(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    return new Map(res.body.map((o) => [o.stack_id, o.id]));
  }

  const report = async (agent: Agent, objectId: string, status: 'SUCCESS' | 'FAILURE') => {
    const res = await agent.client.post(`/agents/${agent.id}/events`, {
      agent_id: agent.id,
      deployment_object_id: objectId,
      event_type: 'DEPLOY',
      status,
      message: null,
    });
    expect(res.status, res.text).to.equal(201);
  };

  const reportHealth = async (agent: Agent, objectId: string, status: 'healthy' | 'degraded') => {
    const res = await agent.client.patch(`/agents/${agent.id}/health-status`, {
      deployment_objects: [{ id: objectId, status, checked_at: new Date().toISOString() }],
    });
    expect(res.status, res.text).to.equal(200);
  };

  const status = async (t: Tenant, stack: string, agent: Agent) => {
    const res = await t.client.get<Record<string, unknown>>(`/stacks/${stack}/agents/${agent.id}/status`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  const expectError = (res: ApiResponse, httpStatus: number, code: string) =>
    expect([res.status, res.body?.code], res.text).to.deep.equal([httpStatus, code]);

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('creates, lists and deletes a dependency, audited; a second one on the same stack is refused', async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const res = await depend(t, b, a, 'healthy');
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.deep.include({
      stack_id: a,
      dependent_id: b,
      ready_when: 'healthy',
      scope: 'agent',
      created_by: `generator:${t.id}`,
    });
    expect(res.body.created_at).to.be.a('string');
    expectError(await depend(t, b, a, 'applied'), 409, 'dependency_exists');

    const list = await t.client.get<{ stack_id: string }[]>(`/stacks/${b}/dependencies`);
    expect(list.status).to.equal(200);
    expect(list.body.map((d) => d.stack_id)).to.deep.equal([a]);
    expect((await t.client.get(`/stacks/${a}/dependencies`)).body).to.deep.equal([]);

    const fleet = await depend(t, a, await stackOf(t), 'applied fleet');
    expect(fleet.status, fleet.text).to.equal(201);
    expect(fleet.body.scope).to.equal('fleet');

    expect((await t.client.delete(`/stacks/${b}/dependencies/${a}`)).status).to.equal(204);
    expectError(await t.client.delete(`/stacks/${b}/dependencies/${a}`), 404, 'dependency_not_found');
    expect((await t.client.get(`/stacks/${b}/dependencies`)).body).to.deep.equal([]);

    const audited = await eventually(async () => {
      const entries = (await auditMessages(api.natsUrl)).filter((e) => e.resource_id === b);
      const actions = entries.map((e) => e.action);
      return actions.includes('stack.dependency_created') && actions.includes('stack.dependency_deleted') ? entries : undefined;
    });
    expect(audited.find((e) => e.action === 'stack.dependency_created')).to.deep.include({ actor_type: 'generator', actor_id: t.id });
  });

  it('lets only the admin and the owning generator change or read them, on stacks they may read; bad input is a 4xx', async () => {
    const [t, other] = [await tenant(), await tenant()];
    const [a, b, foreign] = [await stackOf(t), await stackOf(t), await stackOf(other)];
    expectError(await depend(other, b, a, 'applied'), 403, 'stack_not_owned');
    expectError(await other.client.get(`/stacks/${b}/dependencies`), 403, 'stack_not_owned');
    expectError(await depend(t, b, foreign, 'applied'), 403, 'stack_not_owned');
    expectError(await depend(t, b, '00000000-0000-4000-8000-000000000000', 'applied'), 404, 'stack_not_found');
    expectError(await depend(t, b, a, 'soon'), 422, 'invalid_request_body');
    expectError(await depend(t, b, a, 'applied galaxy'), 422, 'invalid_request_body');
    expectError(await t.client.post(`/stacks/${b}/dependencies`, { stack_id: 'nope', ready_when: 'applied' }), 422, 'invalid_request_body');
    expectError(await t.client.get(`/stacks/not-a-uuid/dependencies`), 400, 'invalid_id');
    expect((await t.client.get(`/stacks/${b}/dependencies`)).body).to.deep.equal([]);

    // The admin may tie any two stacks; the owner then sees and removes it, the other tenant still not.
    expect((await depend({ id: '', client: api.admin }, b, foreign, 'applied')).status).to.equal(201);
    expectError(await other.client.delete(`/stacks/${b}/dependencies/${foreign}`), 403, 'stack_not_owned');
    expect((await t.client.delete(`/stacks/${b}/dependencies/${foreign}`)).status).to.equal(204);
  });

  it('refuses a dependency that closes a cycle, naming the stacks in order', async () => {
    const t = await tenant();
    const [a, b, c] = [await stackOf(t), await stackOf(t), await stackOf(t)];
    expect((await depend(t, a, b, 'applied')).status).to.equal(201);
    expect((await depend(t, b, c, 'applied')).status).to.equal(201);
    const res = await depend(t, c, a, 'applied');
    expectError(res, 422, 'dependency_cycle');
    expect(res.body.details).to.deep.equal({ cycle: [c, a, b, c] });
    const self = await depend(t, a, a, 'applied');
    expectError(self, 422, 'dependency_cycle');
    expect(self.body.details).to.deep.equal({ cycle: [a, a] });
    expect((await t.client.get(`/stacks/${c}/dependencies`)).body).to.deep.equal([]);
  });

  it('lets no two concurrent writes close a cycle between them', async () => {
    const t = await tenant();
    for (let round = 0; round < 5; round++) {
      const [a, b] = [await stackOf(t), await stackOf(t)];
      const results = await Promise.all([depend(t, a, b, 'applied'), depend(t, b, a, 'applied')]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([201, 422]);
    }
  });

  it('holds a stack back until the agent applied what it needs (applied), and says so; an agent without dependencies is unaffected', async () => {
    const t = await tenant();
    const [a, b, c] = [await stackOf(t), await stackOf(t), await stackOf(t)];
    const agent = await agentOf(t, [a, b]);
    const plain = await agentOf(t, [a, c]);
    const aObject = await postObject(t, a);
    const bObject = await postObject(t, b);
    const cObject = await postObject(t, c);
    expect((await depend(t, b, a, 'applied')).status).to.equal(201);

    expect(await served(agent)).to.deep.equal(new Map([[a, aObject]]));
    expect(await status(t, b, agent)).to.deep.equal({
      state: 'waiting',
      reason: 'dependency',
      stack_id: a,
      ready_when: 'applied',
      scope: 'agent',
      waiting_on: [{ stack_id: a, ready_when: 'applied', scope: 'agent' }],
    });
    expect(await status(t, a, agent)).to.deep.equal({ state: 'served', waiting_on: [] });
    expect(await served(plain)).to.deep.equal(
      new Map([
        [a, aObject],
        [c, cObject],
      ]),
    );

    await report(agent, aObject, 'FAILURE');
    expect(await served(agent)).to.deep.equal(new Map([[a, aObject]]));
    await report(agent, aObject, 'SUCCESS');
    expect(await served(agent)).to.deep.equal(
      new Map([
        [a, aObject],
        [b, bObject],
      ]),
    );
    expect(await status(t, b, agent)).to.deep.equal({ state: 'served', waiting_on: [] });
    // Another agent applying A releases nothing on an agent of its own (scope: agent).
    expect(await served(plain)).to.deep.equal(
      new Map([
        [a, aObject],
        [c, cObject],
      ]),
    );

    // A new version of A holds B again: B's newest object is not served, but what the agent applied of B stays.
    await report(agent, bObject, 'SUCCESS');
    const aNext = await postObject(t, a, '2');
    const bNext = await postObject(t, b, '2');
    expect(await served(agent)).to.deep.equal(
      new Map([
        [a, aNext],
        [b, bObject],
      ]),
    );
    expect((await status(t, b, agent)).state).to.equal('waiting');
    await report(agent, aNext, 'SUCCESS');
    expect(await served(agent)).to.deep.equal(
      new Map([
        [a, aNext],
        [b, bNext],
      ]),
    );
  });

  it('waits for health (healthy): a SUCCESS is not enough, a healthy report releases, a degraded one holds back again', async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const agent = await agentOf(t, [a, b]);
    const aObject = await postObject(t, a);
    expect((await depend(t, b, a, 'healthy')).status).to.equal(201);
    const bObject = await postObject(t, b);

    await report(agent, aObject, 'SUCCESS');
    expect(await served(agent)).to.deep.equal(new Map([[a, aObject]]));
    expect(await status(t, b, agent)).to.deep.include({ state: 'waiting', reason: 'dependency', stack_id: a, ready_when: 'healthy' });
    await reportHealth(agent, aObject, 'degraded');
    expect(await served(agent)).to.deep.equal(new Map([[a, aObject]]));

    await reportHealth(agent, aObject, 'healthy');
    expect(await served(agent)).to.deep.equal(
      new Map([
        [a, aObject],
        [b, bObject],
      ]),
    );
    expect((await status(t, b, agent)).state).to.equal('served');

    // Never applied: held back entirely again while A is degraded.
    await reportHealth(agent, aObject, 'degraded');
    expect(await served(agent)).to.deep.equal(new Map([[a, aObject]]));
    expect((await status(t, b, agent)).state).to.equal('waiting');
  });

  it("names the waiting agents in the stack's health summary, and nothing more for a stack that waits for nothing", async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const ready = await agentOf(t, [a, b]);
    const waiting = await agentOf(t, [a, b]);
    const aObject = await postObject(t, a);
    await postObject(t, b);
    expect((await depend(t, b, a, 'healthy')).status).to.equal(201);
    await reportHealth(ready, aObject, 'healthy');
    await reportHealth(waiting, aObject, 'degraded');

    const summary = await api.admin.get<Record<string, unknown>>(`/stacks/${b}/health`);
    expect(summary.status, summary.text).to.equal(200);
    expect(summary.body.waiting_agents).to.deep.equal([
      { agent_id: waiting.id, stack_id: a, ready_when: 'healthy', scope: 'agent', reason: 'dependency' },
    ]);
    const plain = await api.admin.get<Record<string, unknown>>(`/stacks/${a}/health`);
    expect(Object.keys(plain.body).sort()).to.deep.equal(['deployment_objects', 'overall_status', 'stack_id']);
  });

  it('waits for every agent of the dependency (fleet): the last one to apply it releases the dependent stack elsewhere', async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const edge = await agentOf(t, [b]);
    const db1 = await agentOf(t, [a]);
    const db2 = await agentOf(t, [a]);
    const aObject = await postObject(t, a);
    const bObject = await postObject(t, b);
    expect((await depend(t, b, a, 'applied fleet')).status).to.equal(201);

    expect(await served(edge)).to.deep.equal(new Map());
    await report(db1, aObject, 'SUCCESS');
    expect(await served(edge)).to.deep.equal(new Map());
    expect(await status(t, b, edge)).to.deep.include({ state: 'waiting', stack_id: a, scope: 'fleet' });
    await report(db2, aObject, 'SUCCESS');
    expect(await served(edge)).to.deep.equal(new Map([[b, bObject]]));

    // A new version of A is ready nowhere yet: the edge agent, which never applied B, loses it until it is.
    const aNext = await postObject(t, a, '2');
    expect(await served(edge)).to.deep.equal(new Map());
    await report(db1, aNext, 'SUCCESS');
    await report(db2, aNext, 'SUCCESS');
    expect(await served(edge)).to.deep.equal(new Map([[b, bObject]]));
  });

  it('answers the status of an agent the stack does not reach, and 404 for an unknown agent', async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const agent = await agentOf(t, [a]);
    expect((await status(t, b, agent)).state).to.equal('not_targeted');
    expect((await status(t, a, agent)).state).to.equal('no_object');
    expectError(await t.client.get(`/stacks/${a}/agents/00000000-0000-4000-8000-000000000000/status`), 404, 'agent_not_found');
    expectError(await (await tenant()).client.get(`/stacks/${a}/agents/${agent.id}/status`), 403, 'stack_not_owned');
  });

  it('keeps gating on a deleted dependency: what the agent applied stays, nothing new arrives, until the dependency is removed', async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const agent = await agentOf(t, [a, b]);
    const aObject = await postObject(t, a);
    const bObject = await postObject(t, b);
    expect((await depend(t, b, a, 'applied')).status).to.equal(201);
    await report(agent, aObject, 'SUCCESS');
    await report(agent, bObject, 'SUCCESS');
    expect((await t.client.delete(`/stacks/${a}`)).status).to.equal(204);
    const bNext = await postObject(t, b, '2');

    const state = await served(agent);
    expect(state.get(b)).to.equal(bObject);
    expect(await status(t, b, agent)).to.deep.include({ state: 'waiting', stack_id: a });
    expectError(await depend(t, await stackOf(t), a, 'applied'), 404, 'stack_not_found');
    // Reverse-order deletion: B, live, is still on the agent, so A's deletion marker waits and the
    // agent keeps what it applied of A.
    expect(state.get(a)).to.equal(aObject);
    expect(await status(t, a, agent)).to.deep.equal({
      state: 'waiting',
      reason: 'dependents',
      stack_id: b,
      dependents: [b],
      waiting_on: [],
    });

    expect((await t.client.delete(`/stacks/${b}/dependencies/${a}`)).status).to.equal(204);
    const after = await fullState(agent);
    expect(after.find((o) => o.stack_id === b)?.id).to.equal(bNext);
    expect(after.find((o) => o.stack_id === a)?.is_deletion_marker).to.equal(true);
    expect((await status(t, a, agent)).state).to.equal('served');
  });

  it('releases the dependent stack when the dependency is removed', async () => {
    const t = await tenant();
    const [a, b] = [await stackOf(t), await stackOf(t)];
    const agent = await agentOf(t, [a, b]);
    const aObject = await postObject(t, a);
    const bObject = await postObject(t, b);
    expect((await depend(t, b, a, 'healthy')).status).to.equal(201);
    expect(await served(agent)).to.deep.equal(new Map([[a, aObject]]));
    expect((await t.client.delete(`/stacks/${b}/dependencies/${a}`)).status).to.equal(204);
    expect(await served(agent)).to.deep.equal(
      new Map([
        [a, aObject],
        [b, bObject],
      ]),
    );
  });

  describe('by selector', () => {
    it('waits for every stack of the tenant a selector matches on the agent: one matching nothing is ready, a stack labelled later joins', async () => {
      const t = await tenant();
      const other = await tenant();
      const [crd, far, app] = [await stackOf(t), await stackOf(t), await stackOf(t)];
      const foreign = await stackOf(other);
      const agent = await agentOf(t, [crd, app]);
      const [crdObject, appObject] = [await postObject(t, crd), await postObject(t, app)];
      await postObject(t, far);
      // Another tenant's stack on the same agent, never applied: it would hold the app back if the selector matched it.
      expect((await api.admin.post(`/generators/${other.id}/register`, { agent_id: agent.id })).status).to.equal(201);
      expect((await other.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: foreign })).status).to.equal(201);
      const foreignObject = await postObject(other, foreign);

      const res = await dependOnSelector(t, app, ['crds', 'crds'], 'applied');
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.deep.include({ selector: { labels: ['crds'] }, dependent_id: app, ready_when: 'applied', scope: 'agent' });
      expect(res.body).to.not.have.property('stack_id');
      expectError(await dependOnSelector(t, app, ['crds'], 'healthy'), 409, 'dependency_exists');
      expectError(
        await t.client.post(`/stacks/${app}/dependencies`, { stack_id: crd, selector: { labels: ['x'] }, ready_when: 'applied' }),
        422,
        'invalid_request_body',
      );
      expect((await t.client.get(`/stacks/${app}/dependencies`)).body).to.deep.equal([res.body]);
      // Nothing carries the labels yet: ready. The dependent itself never matches, nor another tenant's stack.
      await label(t, app, 'crds');
      await label(other, foreign, 'crds');
      expect(await served(agent)).to.deep.equal(
        new Map([
          [crd, crdObject],
          [app, appObject],
          [foreign, foreignObject],
        ]),
      );

      // Labelled later, it joins: the app waits for it on this agent, and not for `far`, which does not reach it.
      await label(t, crd, 'crds');
      await label(t, far, 'crds');
      expect(await served(agent)).to.deep.equal(
        new Map([
          [crd, crdObject],
          [foreign, foreignObject],
        ]),
      );
      const selector = { labels: ['crds'] };
      expect(await status(t, app, agent)).to.deep.equal({
        state: 'waiting',
        reason: 'dependency',
        stack_id: crd,
        ready_when: 'applied',
        scope: 'agent',
        selector,
        waiting_on: [{ stack_id: crd, ready_when: 'applied', scope: 'agent', selector }],
      });

      await report(agent, crdObject, 'SUCCESS');
      expect(await served(agent)).to.deep.equal(
        new Map([
          [crd, crdObject],
          [app, appObject],
          [foreign, foreignObject],
        ]),
      );
      expect(await status(t, app, agent)).to.deep.equal({ state: 'served', waiting_on: [] });

      // Removed by its id: the stack no longer waits.
      await report(agent, appObject, 'SUCCESS');
      const appNext = await postObject(t, app, '2');
      const crdNext = await postObject(t, crd, '2');
      expect((await served(agent)).get(app)).to.equal(appObject);
      expect((await t.client.delete(`/stacks/${app}/dependencies/${res.body.id}`)).status).to.equal(204);
      expect(await served(agent)).to.deep.equal(
        new Map([
          [crd, crdNext],
          [app, appNext],
          [foreign, foreignObject],
        ]),
      );
      expect((await t.client.get(`/stacks/${app}/dependencies`)).body).to.deep.equal([]);
      expectError(await t.client.delete(`/stacks/${app}/dependencies/${res.body.id}`), 404, 'dependency_not_found');
    });

    it('refuses a cycle through a selector, when the selector is added and when a stack label closes it', async () => {
      const t = await tenant();
      const [a, b, c, d] = [await stackOf(t), await stackOf(t), await stackOf(t), await stackOf(t)];
      await label(t, a, 'x');
      expect((await depend(t, a, b, 'applied')).status).to.equal(201);
      const onAdd = await dependOnSelector(t, b, ['x'], 'applied');
      expectError(onAdd, 422, 'dependency_cycle');
      expect(onAdd.body.details).to.deep.equal({ cycle: [b, a, b] });

      expect((await dependOnSelector(t, c, ['y'], 'applied')).status).to.equal(201);
      expect((await depend(t, d, c, 'applied')).status).to.equal(201);
      const onLabel = await t.client.post(`/stacks/${d}/labels`, 'y');
      expectError(onLabel, 422, 'dependency_cycle');
      expect(onLabel.body.details).to.deep.equal({ cycle: [c, d, c] });
      expect((await t.client.get<{ label: string }[]>(`/stacks/${d}/labels`)).body).to.deep.equal([]);
    });

    it('wakes a held long-poll when a label brings a stack into a selector or takes it out, on an agent the stack does not reach (fleet)', async () => {
      const t = await tenant();
      const [app, crd] = [await stackOf(t), await stackOf(t)];
      const agent = await agentOf(t, [app]);
      await agentOf(t, [crd]);
      const appObject = await postObject(t, app);
      await postObject(t, crd);
      expect((await dependOnSelector(t, app, ['crds'], 'applied fleet')).status).to.equal(201);
      const first = await agent.client.get<{ id: string }[]>(`/agents/${agent.id}/target-state`);
      expect(first.body.map((o) => o.id)).to.deep.equal([appObject]);

      /** A held request, answered once `change` alters the agent's answer. */
      const heldAcross = async (etag: string, change: () => Promise<void>) => {
        const before = await longPollsWaiting();
        const held = agent.client.get<{ id: string }[]>(`/agents/${agent.id}/target-state`, {
          query: { wait: 60 },
          headers: { 'if-none-match': etag },
        });
        held.catch(() => undefined);
        await eventually(async () => (await longPollsWaiting()) > before, { timeoutMs: 30_000, what: 'the request to be held' });
        await change();
        const answer = await held;
        expect(answer.status, answer.text).to.equal(200);
        return answer;
      };
      // The label on `crd` (which never reaches this agent) makes `app` wait: the agent never applied it, so it goes.
      const joined = await heldAcross(first.headers.get('etag')!, () => label(t, crd, 'crds'));
      expect(joined.body).to.deep.equal([]);
      const left = await heldAcross(joined.headers.get('etag')!, async () => {
        expect((await t.client.delete(`/stacks/${crd}/labels/crds`)).status).to.equal(204);
      });
      expect(left.body.map((o) => o.id)).to.deep.equal([appObject]);
    });
  });

  describe('reverse-order deletion', () => {
    it("deletes the dependent before what it depends on: the agent gets the dependency's marker only once it reported the dependent's", async () => {
      const t = await tenant();
      const [a, b] = [await stackOf(t), await stackOf(t)];
      const agent = await agentOf(t, [a, b]);
      const [aObject, bObject] = [await postObject(t, a), await postObject(t, b)];
      expect((await depend(t, b, a, 'applied')).status).to.equal(201);
      await report(agent, aObject, 'SUCCESS');
      await report(agent, bObject, 'SUCCESS');

      expect((await t.client.delete(`/stacks/${a}`)).status).to.equal(204);
      expect((await t.client.delete(`/stacks/${b}`)).status).to.equal(204);
      let state = await fullState(agent);
      const bMarker = state.find((o) => o.stack_id === b)!;
      expect(bMarker.is_deletion_marker).to.equal(true);
      expect(state.find((o) => o.stack_id === a)).to.deep.include({ id: aObject, is_deletion_marker: false });
      expect(await status(t, a, agent)).to.deep.equal({
        state: 'waiting',
        reason: 'dependents',
        stack_id: b,
        dependents: [b],
        waiting_on: [],
      });
      // The incremental answer has B's marker only: what it applied of A is not sent again.
      const incremental = await agent.client.get<{ id: string }[]>(`/agents/${agent.id}/target-state`);
      expect(incremental.body.map((o) => o.id)).to.deep.equal([bMarker.id]);

      await report(agent, bMarker.id, 'SUCCESS');
      state = await fullState(agent);
      expect(state.map((o) => [o.stack_id, o.is_deletion_marker])).to.deep.equal([[a, true]]);
      expect((await status(t, a, agent)).state).to.equal('served');
      await report(agent, state[0]!.id, 'SUCCESS');
      expect(await fullState(agent)).to.deep.equal([]);
    });

    it('holds the deletion of a stack selected by a live stack, until the selector dependency is removed', async () => {
      const t = await tenant();
      const [crd, app] = [await stackOf(t), await stackOf(t)];
      const agent = await agentOf(t, [crd, app]);
      const [crdObject, appObject] = [await postObject(t, crd), await postObject(t, app)];
      await label(t, crd, 'crds');
      const dep = await dependOnSelector(t, app, ['crds'], 'applied');
      expect(dep.status, dep.text).to.equal(201);
      await report(agent, crdObject, 'SUCCESS');
      await report(agent, appObject, 'SUCCESS');

      expect((await t.client.delete(`/stacks/${crd}`)).status).to.equal(204);
      expect(await served(agent)).to.deep.equal(
        new Map([
          [crd, crdObject],
          [app, appObject],
        ]),
      );
      expect(await status(t, crd, agent)).to.deep.include({ state: 'waiting', reason: 'dependents', dependents: [app] });

      expect((await t.client.delete(`/stacks/${app}/dependencies/${dep.body.id}`)).status).to.equal(204);
      const state = await fullState(agent);
      expect(state.find((o) => o.stack_id === crd)?.is_deletion_marker).to.equal(true);
      expect(state.find((o) => o.stack_id === app)?.id).to.equal(appObject);
    });
  });
});

import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { createAgent, createGenerator, createStack, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';

/**
 * The console's server side, over HTTP like the browser uses it: the static page and vendor
 * modules, the paged read views under /ui/api (access rules, validation, health and event
 * aggregation) and the live stream at /ui/events (who sees which hint, across api replicas).
 */

interface StreamMessage {
  kind: string;
  data: { event_type?: string; action?: string; data?: Record<string, unknown> };
}

/** Reads /ui/events the way the console does (fetch with the PAK in Authorization). */
function openStream(url: string, pak: string) {
  const messages: StreamMessage[] = [];
  const state = { ended: false };
  const controller = new AbortController();
  const ready = (async () => {
    const res = await fetch(`${url}/ui/events`, { headers: { authorization: `Bearer ${pak}` }, signal: controller.signal });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    const pump = async (): Promise<void> => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          state.ended = true;
          return;
        }
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const kind = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (kind && data) messages.push({ kind, data: JSON.parse(data) });
        }
      }
    };
    pump().catch(() => undefined);
    await eventually(() => messages.some((m) => m.kind === 'ready'), { what: 'the ready message' });
  })();
  return { messages, ready, state, close: () => controller.abort() };
}

describe('console server side (/ui)', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let tenant: { generator: { id: string }; pak: string; client: ApiClient };
  let other: { generator: { id: string }; pak: string; client: ApiClient };
  let agents: { agent: { id: string; name: string }; initial_pak: string; client: ApiClient }[];
  let outsider: { agent: { id: string; name: string }; client: ApiClient };
  let stack: { id: string };
  let otherStack: { id: string; name: string };
  let objectId: string;
  let otherObjectId: string;
  const ui = (path: string, pak: string | null) => api.anonymous.get(`//ui${path}`, { pak });

  before(async () => {
    api = await startTestApi(infra);
    tenant = await createGenerator(api.admin);
    other = await createGenerator(api.admin);
    agents = [];
    for (const name of ['alpha', 'bravo', 'charlie']) {
      agents.push(await createAgent(api.admin, { name: uniqueName(name), generator_ids: [tenant.generator.id] }));
    }
    outsider = await createAgent(api.admin, { name: uniqueName('zulu') });
    stack = await createStack(tenant.client, { generator_id: tenant.generator.id });
    otherStack = await createStack(other.client, { generator_id: other.generator.id });
    for (const a of agents) await api.admin.post(`/agents/${a.agent.id}/targets`, { agent_id: a.agent.id, stack_id: stack.id });
    const created = await tenant.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    objectId = created.body.id;
    otherObjectId = (await other.client.post(`/stacks/${otherStack.id}/deployment-objects`, { yaml_content: 'kind: Secret\n' })).body.id;
  });
  after(() => api?.stop());

  it('serves the page with a strict CSP, its modules and the vendor libraries; no data without a PAK', async () => {
    const page = await ui('', null);
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('<script type="importmap">').and.contain('/ui/app/main.js');
    expect(page.headers.get('content-security-policy')).to.match(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    for (const path of ['/app/main.js', '/app/styles.css', '/vendor/preact.mjs', '/vendor/hooks.mjs', '/vendor/htm.mjs']) {
      expect((await ui(path, null)).status, path).to.equal(200);
    }
    expect((await ui('/vendor/package.json', null)).status).to.equal(404);
    // API docs: Swagger UI's own files from swagger-ui-dist, and nothing else of the package.
    expect((await api.anonymous.get('//docs')).text).to.contain('/docs/assets/swagger-ui-bundle.js');
    expect((await api.anonymous.get('//docs/assets/swagger-ui-bundle.js')).status).to.equal(200);
    expect((await api.anonymous.get('//docs/assets/index.html')).status).to.equal(404);
    expect((await ui('/app/../../package.json', null)).status).to.equal(404);
    const fleet = await ui('/api/fleet', null);
    expect(fleet.status).to.equal(401);
    expect(fleet.body.code).to.equal('unauthorized');
    expect((await ui('/events', null)).status).to.equal(401);
    expect((await ui('/api/fleet', 'brokkr_BRnope_000000000000')).status).to.equal(401);
  });

  it('fleet: pages, searches, and counts health per agent and in total', async () => {
    const [a, b] = agents;
    const health = (status: string) => ({ deployment_objects: [{ id: objectId, status, checked_at: new Date().toISOString() }] });
    expect((await a!.client.patch(`/agents/${a!.agent.id}/health-status`, health('healthy'))).status).to.equal(200);
    expect((await b!.client.patch(`/agents/${b!.agent.id}/health-status`, health('failing'))).status).to.equal(200);
    await a!.client.post(`/agents/${a!.agent.id}/heartbeat`, { k8s_reachable: false });

    const all = await ui('/api/fleet?limit=500', api.adminPak);
    expect(all.status, all.text).to.equal(200);
    expect(all.body.total).to.equal(4);
    expect(all.body.summary).to.deep.include({ total: 4, inactive: 4, k8s_unreachable: 1, never_seen: 3 });
    expect(all.body.summary.health).to.deep.equal({ healthy: 1, degraded: 0, failing: 1, unknown: 0 });
    const byId = new Map(all.body.agents.map((x: { id: string }) => [x.id, x]));
    expect((byId.get(a!.agent.id) as { health: object }).health).to.deep.equal({ healthy: 1, degraded: 0, failing: 0, unknown: 0 });
    expect((byId.get(b!.agent.id) as { health: object }).health).to.deep.equal({ healthy: 0, degraded: 0, failing: 1, unknown: 0 });

    const second = await ui('/api/fleet?limit=1&offset=1', api.adminPak);
    expect(second.body.agents).to.have.length(1);
    expect(second.body.agents[0].id).to.equal(all.body.agents[1].id);
    const searched = await ui(`/api/fleet?q=${encodeURIComponent(outsider.agent.name.toUpperCase())}`, api.adminPak);
    expect(searched.body.agents.map((x: { id: string }) => x.id)).to.deep.equal([outsider.agent.id]);
    // LIKE wildcards are literal: '%' matches no agent name.
    expect((await ui('/api/fleet?q=%25', api.adminPak)).body.total).to.equal(0);
  });

  it('refuses bad input with 400 and callers that may not read with 403', async () => {
    for (const query of ['limit=0', 'limit=abc', 'limit=501', 'offset=-1', 'q=%00']) {
      const res = await ui(`/api/fleet?${query}`, api.adminPak);
      expect(res.status, query).to.equal(400);
      expect(res.body.code, query).to.equal('invalid_query');
    }
    expect((await ui('/api/stacks/not-a-uuid/deployment-objects', api.adminPak)).body.code).to.equal('invalid_id');
    const agentPak = agents[0]!.initial_pak;
    expect((await ui('/api/fleet', agentPak)).body.code).to.equal('generator_required');
    expect((await ui(`/api/deployment-objects/${objectId}/agents`, agentPak)).status).to.equal(403);
    expect((await ui(`/api/stacks/${crypto.randomUUID()}/deployment-objects`, api.adminPak)).status).to.equal(404);
    expect((await ui(`/api/deployment-objects/${crypto.randomUUID()}/agents`, api.adminPak)).status).to.equal(404);
  });

  it("a generator reads only its tenants and its own stacks' objects", async () => {
    const fleet = await ui('/api/fleet', tenant.pak);
    expect(fleet.status).to.equal(200);
    expect(fleet.body.agents.map((x: { id: string }) => x.id).sort()).to.deep.equal(agents.map((a) => a.agent.id).sort());
    expect((await ui('/api/fleet', other.pak)).body.total).to.equal(0);
    const stacks = await ui('/api/stacks', tenant.pak);
    expect(stacks.status, stacks.text).to.equal(200);
    expect(stacks.body.stacks.map((x: { id: string }) => x.id)).to.deep.equal([stack.id]);
    expect(stacks.body.stacks[0]).to.include({ object_count: 1 });
    const all = await ui('/api/stacks?limit=1', api.adminPak);
    expect(all.body.total).to.be.at.least(2);
    expect(all.body.stacks).to.have.length(1);
    expect((await ui(`/api/stacks?q=${encodeURIComponent(otherStack.name)}`, api.adminPak)).body.stacks).to.have.length(1);
    const own = await ui(`/api/stacks/${stack.id}/deployment-objects`, tenant.pak);
    expect(own.status).to.equal(200);
    expect(own.body.objects.map((o: { id: string }) => o.id)).to.deep.equal([objectId]);
    expect(own.body.objects[0]).not.to.have.property('yaml_content');
    const foreign = await ui(`/api/stacks/${otherStack.id}/deployment-objects`, tenant.pak);
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('stack_not_owned');
    expect((await ui(`/api/deployment-objects/${otherObjectId}/agents`, tenant.pak)).body.code).to.equal('generator_not_associated');
  });

  it("a deployment object's per-agent state follows the agents' events", async () => {
    const [a, b] = agents;
    const report = (x: (typeof agents)[number], status: string) =>
      x.client.post(`/agents/${x.agent.id}/events`, { agent_id: x.agent.id, deployment_object_id: objectId, event_type: 'DEPLOY', status });
    expect((await report(a!, 'FAILURE')).status).to.equal(201);
    expect((await report(a!, 'SUCCESS')).status).to.equal(201);
    expect((await report(b!, 'FAILURE')).status).to.equal(201);

    const res = await ui(`/api/deployment-objects/${objectId}/agents`, tenant.pak);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.deployment_object.yaml_content).to.equal('kind: ConfigMap\n');
    expect(res.body.total).to.equal(3);
    const state = new Map(
      res.body.agents.map((x: { agent_id: string; last_event: { status: string } | null }) => [x.agent_id, x.last_event?.status]),
    );
    expect(state.get(a!.agent.id)).to.equal('SUCCESS');
    expect(state.get(b!.agent.id)).to.equal('FAILURE');
    expect(state.get(agents[2]!.agent.id)).to.equal(undefined);
    expect(res.body.recent_events).to.have.length(3);

    const page = await ui(`/api/stacks/${stack.id}/deployment-objects`, api.adminPak);
    expect(page.body.objects[0]).to.include({ applied_agents: 1, failed_agents: 1 });
  });

  it('streams hints from NATS to every replica, filtered by who is watching', async () => {
    const replica = await api.spawnReplica();
    const admin = openStream(replica.url, api.adminPak);
    const owner = openStream(replica.url, tenant.pak);
    const stranger = openStream(api.url, other.pak);
    try {
      await Promise.all([admin.ready, owner.ready, stranger.ready]);
      // Written through the first replica; the streams are on the second (and the first, for `stranger`).
      const created = await tenant.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\nx: 1\n' });
      expect(created.status).to.equal(201);
      const isNew = (m: StreamMessage) =>
        m.data.event_type === 'deployment.created' && m.data.data?.deployment_object_id === created.body.id;
      await eventually(() => admin.messages.some(isNew), { what: 'the admin hint' });
      await eventually(() => owner.messages.some(isNew), { what: "the owner's hint" });
      await createStack(tenant.client, { generator_id: tenant.generator.id });
      await eventually(() => admin.messages.some((m) => m.kind === 'audit' && m.data.action === 'stack.created'), {
        what: 'an audit hint',
      });
      // A later event the stranger may see proves its stream was flowing when the first went by.
      const own = await other.client.post(`/stacks/${otherStack.id}/deployment-objects`, { yaml_content: 'kind: Secret\nx: 2\n' });
      await eventually(() => stranger.messages.some((m) => m.data.data?.deployment_object_id === own.body.id), {
        what: "the stranger's own hint",
      });
      expect(stranger.messages.some(isNew)).to.equal(false);
      expect(owner.messages.some((m) => m.data.data?.deployment_object_id === own.body.id)).to.equal(false);
      expect([...owner.messages, ...stranger.messages].some((m) => m.kind === 'audit')).to.equal(false);
    } finally {
      admin.close();
      owner.close();
      stranger.close();
    }
  });

  it('subscribes while a browser watches: a stream opened after the last one closed still gets hints', async () => {
    const replica = await api.spawnReplica();
    const first = openStream(replica.url, api.adminPak);
    await first.ready;
    first.close();
    // The replica drops its subscription when its last stream goes; the next one must bring it back.
    await eventually(
      async () => {
        const res = await fetch(`${replica.url}/metrics`);
        return /brokkr_console_streams(\{[^}]*\})? 0\b/.test(await res.text());
      },
      { what: 'the first stream to be gone' },
    );
    const second = openStream(replica.url, api.adminPak);
    try {
      await second.ready;
      const created = await tenant.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\nx: 3\n' });
      expect(created.status).to.equal(201);
      await eventually(() => second.messages.some((m) => m.data.data?.deployment_object_id === created.body.id), {
        what: 'the hint on the second stream',
      });
    } finally {
      second.close();
    }
  });

  it('ends the stream of a PAK that was rotated, before sending it anything more', async () => {
    const gen = await createGenerator(api.admin);
    const ownStack = await createStack(gen.client, { generator_id: gen.generator.id });
    const stream = openStream(api.url, gen.pak);
    try {
      await stream.ready;
      const rotated = await api.admin.post(`/generators/${gen.generator.id}/rotate-pak`);
      expect(rotated.status, rotated.text).to.equal(201);
      // An event the generator could see before the rotation.
      const created = await api.admin.post(`/stacks/${ownStack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
      expect(created.status).to.equal(201);
      await eventually(() => stream.state.ended, { what: 'the stream to end' });
      expect(stream.messages.filter((m) => m.kind !== 'ready')).to.deep.equal([]);
    } finally {
      stream.close();
    }
  });
});

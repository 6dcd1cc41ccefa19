import { expect } from 'chai';
import { WebSocket } from 'ws';
import { generatePak } from '@brokkr/pak';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  ApiClient,
  createAgent,
  createGenerator,
  createStack,
  spawnApi,
  startTestApi,
  type ApiProcess,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';
import { startPgProxy, type PgProxy } from './support/pg-proxy.ts';
import { Consumer } from './support/cluster-events.ts';

/**
 * What one authenticated tenant may hold or ask for (docs/security.md, "Denial of service by an
 * authenticated tenant"): message sizes per socket, open streams per PAK, list sizes, and what
 * unknown PAKs cost the database. Brokkr bounds none of these.
 */

const wsUrl = (base: string, path: string) => base.replace(/^http/, 'ws') + path;

/** Opens a socket with `Authorization`, sends `bytes` bytes as one text message, resolves with the close code. */
function closeCodeAfterSending(base: string, path: string, pak: string, bytes: number): Promise<number> {
  const ws = new WebSocket(wsUrl(base, path), { headers: { authorization: `Bearer ${pak}` } });
  return new Promise((resolve, reject) => {
    ws.once('open', () => ws.send('x'.repeat(bytes)));
    ws.once('close', (code) => resolve(code));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('error', () => undefined);
  });
}

/** The upgrade's refusal: its status and JSON body. */
function refusedUpgrade(base: string, path: string, pak: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const ws = new WebSocket(wsUrl(base, path), { headers: { authorization: `Bearer ${pak}` } });
  return new Promise((resolve, reject) => {
    ws.once('open', () => (ws.terminate(), reject(new Error('upgrade accepted'))));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    ws.once('error', () => undefined);
  });
}

function expectTooManyStreams(res: ApiResponse | { status: number; body: unknown }, kind: string, limit: number): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(429);
  expect(res.body).to.deep.include({ code: 'too_many_streams' });
  expect((res.body as { details: unknown }).details).to.deep.equal({ kind, limit });
}

describe('tenant limits', function () {
  this.timeout(120_000);

  describe('per-socket message limits, streams per PAK, list sizes', () => {
    const infra = useTestInfra({ nats: true });
    let api: TestApi;
    const closers: { close(): void }[] = [];
    const track = <T extends { close(): void }>(s: T) => (closers.push(s), s);

    before(async () => {
      api = await startTestApi(infra, {
        env: {
          BROKKR__BROKER__MAX_WEBSOCKETS_PER_PAK: '2',
          BROKKR__BROKER__MAX_EVENT_STREAMS_PER_PAK: '1',
          BROKKR__BROKER__MAX_LONG_POLLS_PER_PAK: '1',
          BROKKR__BROKER__LIST_MAX_ITEMS: '3',
        },
      });
    });
    afterEach(() => closers.splice(0).forEach((s) => s.close()));
    after(() => api?.stop());

    it('closes a listen-only socket with 1009 when its client sends more than 4 KiB', async () => {
      const gen = await createGenerator(api.admin);
      const stack = await createStack(gen.client, { generator_id: gen.generator.id });
      expect(await closeCodeAfterSending(api.url, `/api/v1/stacks/${stack.id}/live`, gen.pak, 5 * 1024)).to.equal(1009);
      expect(await closeCodeAfterSending(api.url, '/api/v1/fleet/live', api.adminPak, 5 * 1024)).to.equal(1009);
    });

    it('closes the agent channel with 1009 above 1 MiB per message', async () => {
      const { initial_pak } = await createAgent(api.admin);
      expect(await closeCodeAfterSending(api.url, '/internal/ws/agent', initial_pak, 1024 * 1024 + 1)).to.equal(1009);
    });

    it("answers the PAK's third WebSocket with 429 too_many_streams; another PAK is unaffected; a closed socket frees its slot", async () => {
      const gen = await createGenerator(api.admin);
      const other = await createGenerator(api.admin);
      const stack = await createStack(gen.client, { generator_id: gen.generator.id });
      const otherStack = await createStack(other.client, { generator_id: other.generator.id });
      const path = `/api/v1/stacks/${stack.id}/live`;
      const first = track(await Consumer.open(api.url, path, { header: gen.pak }));
      track(await Consumer.open(api.url, path, { subprotocol: gen.pak }));

      expectTooManyStreams(await refusedUpgrade(api.url, path, gen.pak), 'websocket', 2);
      track(await Consumer.open(api.url, `/api/v1/stacks/${otherStack.id}/live`, { header: other.pak }));

      first.close();
      await eventually(async () => (await Consumer.status(api.url, path, { header: gen.pak })) === 101, { what: 'the slot freed' });
    });

    it("answers the PAK's second console event stream with 429; another PAK is unaffected", async () => {
      const gen = await createGenerator(api.admin);
      const other = await createGenerator(api.admin);
      const controller = new AbortController();
      track({ close: () => controller.abort() });
      const stream = (pak: string) =>
        fetch(`${api.url}/ui/events`, { headers: { authorization: `Bearer ${pak}` }, signal: controller.signal });
      expect((await stream(gen.pak)).status).to.equal(200);

      const refused = await stream(gen.pak);
      expectTooManyStreams({ status: refused.status, body: await refused.json() }, 'event_stream', 1);
      expect((await stream(other.pak)).status).to.equal(200);
    });

    it("answers an agent's second held long-poll with 429; another agent is unaffected", async () => {
      const held = await createAgent(api.admin);
      const other = await createAgent(api.admin);
      const controller = new AbortController();
      track({ close: () => controller.abort() });
      // Held for up to a minute: the work-order list stays empty.
      void fetch(`${api.url}/api/v1/agents/${held.agent.id}/work-orders/pending?wait=60`, {
        headers: { authorization: `Bearer ${held.initial_pak}` },
        signal: controller.signal,
      }).catch(() => undefined);

      // Only once the first is held: a second sent while the first is still on its way would take the
      // slot itself, and the first would be the one refused.
      const waiting = async () => {
        const { text } = await new ApiClient(api.url, null).get('//metrics');
        return Number(/^brokkr_target_state_long_polls_waiting(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
      };
      await eventually(async () => ((await waiting()) >= 1 ? true : undefined), { what: 'the first long-poll held' });
      const refused = await held.client.get(`/agents/${held.agent.id}/diagnostics/pending`, { query: { wait: 1 } });
      expectTooManyStreams(refused, 'long_poll', 1);
      const unaffected = await other.client.get(`/agents/${other.agent.id}/work-orders/pending`, { query: { wait: 1 } });
      expect(unaffected.status, unaffected.text).to.equal(200);
      // Without a wait nothing is held, so nothing is counted.
      expect((await held.client.get(`/agents/${held.agent.id}/work-orders/pending`)).status).to.equal(200);
    });

    describe('lists of YAML-bearing rows (cap 3)', () => {
      let owner: Awaited<ReturnType<typeof createGenerator>>;
      let stackId: string;
      const sequence: number[] = [];

      before(async () => {
        owner = await createGenerator(api.admin);
        stackId = (await createStack(owner.client, { generator_id: owner.generator.id })).id;
        for (let i = 0; i < 5; i++) {
          const res = await owner.client.post<{ sequence_id: number }>(`/stacks/${stackId}/deployment-objects`, {
            yaml_content: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n`,
          });
          expect(res.status, res.text).to.equal(201);
          sequence.unshift(res.body.sequence_id);
        }
      });

      const ids = (res: ApiResponse) => (res.body as { sequence_id: number }[]).map((o) => o.sequence_id);

      it('without paging parameters: a bare array of the newest 3, X-Brokkr-Truncated and a Link to the rest', async () => {
        const res = await owner.client.get(`/stacks/${stackId}/deployment-objects`);
        expect(res.status, res.text).to.equal(200);
        expect(ids(res)).to.deep.equal(sequence.slice(0, 3));
        expect(res.headers.get('x-brokkr-truncated')).to.equal('true');
        expect(res.headers.get('link')).to.equal(`</api/v1/stacks/${stackId}/deployment-objects?limit=3&offset=3>; rel="next"`);
      });

      it('pages with limit/offset (limit capped at 3), Link only while more follow; bad values are 400 invalid_query', async () => {
        const page = await owner.client.get(`/stacks/${stackId}/deployment-objects`, { query: { limit: 2, offset: 2 } });
        expect(ids(page)).to.deep.equal(sequence.slice(2, 4));
        expect(page.headers.get('link')).to.equal(`</api/v1/stacks/${stackId}/deployment-objects?limit=2&offset=4>; rel="next"`);
        expect(page.headers.get('x-brokkr-truncated')).to.equal(null);
        const last = await owner.client.get(`/stacks/${stackId}/deployment-objects`, { query: { limit: 100, offset: 3 } });
        expect(ids(last)).to.deep.equal(sequence.slice(3));
        expect(last.headers.get('link')).to.equal(null);
        for (const query of [{ limit: 0 }, { limit: 'x' }, { offset: -1 }]) {
          const bad = await owner.client.get(`/stacks/${stackId}/deployment-objects`, { query });
          expect(bad.status, JSON.stringify(query)).to.equal(400);
          expect(bad.body.code).to.equal('invalid_query');
        }
      });

      it('caps the agent-event lists and the template list the same way', async () => {
        const { agent, client } = await createAgent(api.admin);
        // Agents report only on objects they are served (agent-reports.test.ts).
        await api.sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [agent.id, stackId]);
        const objects = await owner.client.get<{ id: string }[]>(`/stacks/${stackId}/deployment-objects`);
        for (const object of objects.body) {
          for (const status of ['SUCCESS', 'FAILURE']) {
            const res = await client.post(`/agents/${agent.id}/events`, {
              agent_id: agent.id,
              deployment_object_id: object.id,
              event_type: 'DEPLOY',
              status,
            });
            expect(res.status, res.text).to.equal(201);
          }
        }
        const events = await client.get<unknown[]>(`/agents/${agent.id}/events`);
        expect(events.body).to.have.length(3);
        expect(events.headers.get('x-brokkr-truncated')).to.equal('true');
        const all = await api.admin.get<unknown[]>('/agent-events', { query: { offset: 0 } });
        expect(all.body).to.have.length(3);
        expect(all.headers.get('link')).to.equal('</api/v1/agent-events?limit=3&offset=3>; rel="next"');

        for (let i = 0; i < 4; i++) {
          const res = await owner.client.post('/templates', {
            name: `limits-${i}`,
            template_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fixed\n',
            parameters_schema: '{}',
          });
          expect(res.status, res.text).to.equal(201);
        }
        const templates = await owner.client.get<unknown[]>('/templates');
        expect(templates.body).to.have.length(3);
        expect(templates.headers.get('x-brokkr-truncated')).to.equal('true');
      });
    });
  });

  describe('unknown PAKs', () => {
    // A database of its own: the admin PAK below is the one its first start stores.
    const infra = useTestInfra({ nats: true });
    let proxy: PgProxy;
    let api: ApiProcess;
    let admin: ApiClient;

    before(async () => {
      proxy = await startPgProxy(infra.db.url);
      const { pak, hash } = generatePak();
      api = await spawnApi({
        BROKKR__DATABASE__URL: proxy.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__BROKER__PAK_HASH: hash,
        BROKKR__BROKER__UNKNOWN_PAK_BURST: '5',
        BROKKR__BROKER__UNKNOWN_PAK_PER_MINUTE: '1',
        BROKKR__BROKER__UNKNOWN_PAK_CACHE_SECONDS: '3600',
      });
      admin = new ApiClient(api.url, pak);
    });
    after(async () => {
      await api?.service.stop();
      await proxy?.close();
    });

    it('answers a repeated unknown PAK without the database, and 429 to the unknown PAKs of an address that spent its lookups', async () => {
      expect((await admin.get('/generators')).status).to.equal(200);
      const repeated = admin.as(generatePak().pak);
      expect((await repeated.get('/generators')).status).to.equal(401);

      // With the database gone, a fresh unknown PAK cannot be judged (503); the remembered one still can.
      await proxy.setMode('down');
      expect((await admin.as(generatePak().pak).get('/generators')).status).to.equal(503);
      const again = await repeated.get('/generators');
      expect(again.status, again.text).to.equal(401);
      expect(again.body.code).to.equal('unauthorized');
      await proxy.setMode('up');
      await eventually(async () => (await admin.get('/agents')).status === 200, { what: 'the database back' });

      // One lookup spent above; four more distinct unknown PAKs use up the burst of five.
      for (let i = 0; i < 4; i++) expect((await admin.as(generatePak().pak).get('/generators')).status).to.equal(401);
      const throttled = await admin.as(generatePak().pak).get('/generators');
      expect(throttled.status, throttled.text).to.equal(429);
      expect(throttled.body.code).to.equal('too_many_unknown_paks');
      const throttledSocket = await refusedUpgrade(api.url, '/api/v1/fleet/live', generatePak().pak);
      expect(throttledSocket.status).to.equal(429);
      expect(throttledSocket.body.code).to.equal('too_many_unknown_paks');

      // Cached PAKs and remembered unknown ones cost no lookup, so they are answered as before.
      expect((await admin.get('/generators')).status).to.equal(200);
      expect((await repeated.get('/generators')).status).to.equal(401);
      // A valid PAK from the same address is still looked up (shared with the address's other lookups): never refused.
      const { generator, pak } = await createGenerator(admin);
      const fresh = await admin.as(pak).get(`/generators/${generator.id}`);
      expect(fresh.status, fresh.text).to.equal(200);
      expect((await admin.as(generatePak().pak).get('/generators')).status).to.equal(429);
    });
  });

  describe('unknown PAKs from the one address every client shares (behind an ingress without trusted proxies)', () => {
    const infra = useTestInfra({ nats: true });
    let api: TestApi;

    before(async () => {
      // The default burst (60); a refill too slow to matter while the test runs.
      api = await startTestApi(infra, { env: { BROKKR__BROKER__UNKNOWN_PAK_PER_MINUTE: '1' } });
    });
    after(() => api?.stop());

    it('answers a never-used valid PAK after 70 random PAKs from its address; further random PAKs still get 429', async () => {
      const generator = await createGenerator(api.admin);
      const agent = await createAgent(api.admin);
      const statuses: number[] = [];
      for (let i = 0; i < 70; i++) statuses.push((await api.admin.as(generatePak().pak).get('/generators')).status);
      expect(statuses.slice(0, 60)).to.deep.equal(new Array<number>(60).fill(401));
      expect(statuses.filter((status) => status === 429).length, statuses.join(' ')).to.be.at.least(9);

      // Neither PAK was ever used, so neither is cached.
      const asGenerator = await generator.client.get(`/generators/${generator.generator.id}`);
      expect(asGenerator.status, asGenerator.text).to.equal(200);
      const asAgent = await agent.client.get(`/agents/${agent.agent.id}/target-state`);
      expect(asAgent.status, asAgent.text).to.equal(200);

      const random = await api.admin.as(generatePak().pak).get('/generators');
      expect(random.status, random.text).to.equal(429);
      expect(random.body.code).to.equal('too_many_unknown_paks');
    });
  });
});

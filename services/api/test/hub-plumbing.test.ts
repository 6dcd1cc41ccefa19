import { expect } from 'chai';
import WebSocket from 'ws';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  adminGeneratorId,
  ApiClient,
  auditMessages,
  createAgent,
  startTestApi,
  uniqueName,
  type ApiProcess,
  type TestApi,
} from './support/index.ts';

const SPOOFED = '203.0.113.7';
const PROXY_SAW = '198.51.100.9';
/** What a client behind our proxy sends: its own (made-up) entry, then the address the proxy appended. */
const FORWARDED = `${SPOOFED}, ${PROXY_SAW}`;

/** docs/security.md, "The hub's own plumbing": who the audit log says sent a request, and who may read agent names off /metrics. */
describe("the hub's own plumbing (client address, /metrics)", function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => (api = await startTestApi(infra)));
  after(() => api?.stop());

  /** The ip_address of the audit entries this request left (failed auth and a created stack), by user agent. */
  async function recordedAddresses(replica: ApiProcess): Promise<{ failedAuth: string | null; stackCreated: string | null }> {
    const marker = uniqueName('ua');
    const headers = { 'x-forwarded-for': FORWARDED, 'user-agent': marker };
    await new ApiClient(replica.url, 'brokkr_nope_nope').get('/generators', { headers });
    const generator = await adminGeneratorId(api.admin);
    const created = await new ApiClient(replica.url, api.adminPak).post(
      '/stacks',
      { name: uniqueName('stack'), generator_id: generator },
      { headers },
    );
    expect(created.status, created.text).to.equal(201);
    const entry = (action: string) =>
      eventually(async () => (await auditMessages(api.natsUrl, action)).find((e) => e.user_agent === marker), { what: action });
    return { failedAuth: (await entry('auth.failed')).ip_address, stackCreated: (await entry('stack.created')).ip_address };
  }

  describe('X-Forwarded-For', () => {
    it('is ignored without a trusted proxy: the audit log records the socket address', async () => {
      expect(await recordedAddresses(api)).to.deep.equal({ failedAuth: '127.0.0.1', stackCreated: '127.0.0.1' });
    });

    it('is ignored on a WebSocket upgrade too', async () => {
      const marker = uniqueName('ua');
      const ws = new WebSocket(`${api.url.replace('http', 'ws')}/internal/ws/agent`, {
        headers: { authorization: 'Bearer brokkr_nope_nope', 'x-forwarded-for': FORWARDED, 'user-agent': marker },
      });
      const status = await new Promise<number | undefined>((resolve) => {
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode));
        ws.once('error', () => resolve(undefined));
      });
      expect(status).to.equal(401);
      const entry = await eventually(async () => (await auditMessages(api.natsUrl, 'auth.failed')).find((e) => e.user_agent === marker));
      expect(entry.ip_address).to.equal('127.0.0.1');
    });

    it('BROKKR__BROKER__TRUSTED_PROXIES: the hop our proxy saw, not what the client wrote before it', async () => {
      const behindProxy = await api.spawnReplica({ BROKKR__BROKER__TRUSTED_PROXIES: '127.0.0.1' });
      expect(await recordedAddresses(behindProxy)).to.deep.equal({ failedAuth: PROXY_SAW, stackCreated: PROXY_SAW });
      // Two trusted tiers (a CIDR for the second): the first untrusted hop from the right.
      const twoTiers = await api.spawnReplica({ BROKKR__BROKER__TRUSTED_PROXIES: '127.0.0.1, 198.51.100.0/24' });
      expect(await recordedAddresses(twoTiers)).to.deep.equal({ failedAuth: SPOOFED, stackCreated: SPOOFED });
    });

    it("BROKKR__BROKER__TRUST_PROXY=true: Brokkr's rule, the first entry", async () => {
      const brokkrRule = await api.spawnReplica({ BROKKR__BROKER__TRUST_PROXY: 'true' });
      expect(await recordedAddresses(brokkrRule)).to.deep.equal({ failedAuth: SPOOFED, stackCreated: SPOOFED });
    });
  });

  describe('/metrics', () => {
    it('names no agent on the public port; the metrics port (BROKKR__BROKER__METRICS_PORT) has the per-agent series', async () => {
      const { agent, client } = await createAgent(api.admin, { name: uniqueName('secret-agent-name') });
      expect((await client.post(`/agents/${agent.id}/heartbeat`, {})).status).to.equal(204);

      const anonymous = await fetch(`${api.url}/metrics`);
      expect(anonymous.status).to.equal(200);
      const exposed = await anonymous.text();
      expect(exposed).to.include('brokkr_http_requests_total');
      expect(exposed).to.not.include(agent.name).and.not.include(agent.id).and.not.include('brokkr_agent_heartbeat_age_seconds');

      const scraped = await (await fetch(api.metricsUrl)).text();
      expect(scraped).to.match(new RegExp(`brokkr_agent_heartbeat_age_seconds\\{[^}]*agent_name="${agent.name}"[^}]*\\} \\d+`));
      expect(scraped).to.include('brokkr_http_requests_total{');
    });
  });
});

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import {
  eventually,
  startKubeApiServer,
  startWebhookReceiver,
  useTestInfra,
  type AnyJson,
  type KubeApiServer,
  type Reply,
  type WebhookReceiver,
} from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { createStack, registerAgent, startBroker, type Broker, type RegisteredAgent } from './support/broker.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const WEBHOOK_ENV = { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX, BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

/**
 * Agent-delivered webhooks end to end: api (Postgres + NATS) → dispatcher (delivery rows with the
 * subscription's target_labels) → the agent's poller → a real receiver → the result report.
 */
describe('agent-delivered webhooks (end to end)', function () {
  this.timeout(180_000);
  const infra = useTestInfra({ nats: true });
  let hub: Broker;
  let kube: KubeApiServer;
  let receiver: WebhookReceiver;
  /** Each subscription gets its own path; a path answers what is set here, else 200 ok. */
  const replies = new Map<string, Reply>();
  let labelled: RegisteredAgent;
  let plain: RegisteredAgent;
  let labelledProc: RunningAgentProcess;
  let plainProc: RunningAgentProcess;
  const label = `webhooks-${randomBytes(3).toString('hex')}`;
  const agentEnv = { env: { BROKKR__AGENT__WEBHOOK_POLL_INTERVAL_SECONDS: '1' } };

  before(async () => {
    [hub, kube, receiver] = await Promise.all([
      startBroker(infra, { env: WEBHOOK_ENV, dispatcher: true }),
      startKubeApiServer(),
      startWebhookReceiver((req) => replies.get(req.path) ?? { status: 200, body: 'ok' }),
    ]);
    [labelled, plain] = [await registerAgent(hub.admin), await registerAgent(hub.admin)];
    for (const [agent, labels] of [
      [labelled, [label, 'zone-a']],
      [plain, ['zone-a']],
    ] as const) {
      for (const l of labels)
        expect((await hub.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: l })).status).to.equal(201);
    }
    [labelledProc, plainProc] = await Promise.all([
      spawnAgent(hub.url, labelled, kube.kubeconfigPath, agentEnv),
      spawnAgent(hub.url, plain, kube.kubeconfigPath, agentEnv),
    ]);
  });

  after(async () => {
    await Promise.allSettled([labelledProc?.stop(), plainProc?.stop()]);
    await Promise.allSettled([hub?.stop(), kube?.stop(), receiver?.close()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(labelledProc?.output().slice(-6000));
  });

  async function subscribe(path: string, extra: Record<string, unknown> = {}) {
    const res = await hub.admin.post('/webhooks', {
      name: path,
      url: receiver.urlFor(path),
      auth_header: 'Bearer in-cluster',
      event_types: ['stack.created'],
      target_labels: [label, 'zone-a'],
      ...extra,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string; signing_secret: string };
  }

  async function deliveries(subscriptionId: string): Promise<AnyJson[]> {
    const res = await hub.admin.get<AnyJson[]>(`/webhooks/${subscriptionId}/deliveries`);
    expect(res.status).to.equal(200);
    return res.body;
  }

  const metrics = async (proc: RunningAgentProcess) => (await fetch(`${proc.healthUrl}/metrics`)).text();

  it('delivers to the receiver with Brokkr headers and a signature that verifies with the subscription secret', async () => {
    const sub = await subscribe('/ok');
    const stackId = await createStack(hub.admin);
    const hits = await receiver.waitFor(1, {
      where: (h) => h.path === '/ok' && h.body.includes(stackId),
      timeoutMs: 60_000,
      what: 'the POST',
    });
    const hit = hits[0]!;
    const event = JSON.parse(hit.body);
    expect(event).to.include({ event_type: 'stack.created' });
    const [delivery] = await eventually(
      async () => {
        const list = await deliveries(sub.id);
        return list.length === 1 && list[0].status === 'success' ? list : undefined;
      },
      { timeoutMs: 60_000, what: 'the delivery recorded as success' },
    );
    expect(delivery).to.include({ acquired_by: labelled.id, attempts: 1, last_error: null, event_id: event.id });
    expect(hit.body).to.equal(delivery.payload);
    expect(hit.headers).to.include({
      'content-type': 'application/json',
      authorization: 'Bearer in-cluster',
      'x-brokkr-event-type': 'stack.created',
      'x-brokkr-delivery-id': delivery.id,
      'webhook-id': event.id,
    });
    expect(() => new Webhook(sub.signing_secret).verify(hit.body, hit.headers as Record<string, string>)).to.not.throw();
    await eventually(
      async () => /brokkr_agent_webhook_deliveries_total\{outcome="success",service="agent"\} [1-9]/.test(await metrics(labelledProc)),
      {
        timeoutMs: 30_000,
        what: 'the success counted',
      },
    );
  });

  it('a receiver answering 503 leaves the delivery failed with the status in last_error, and it is retried later', async () => {
    replies.set('/busy', { status: 503, body: 'busy' });
    const sub = await subscribe('/busy');
    await createStack(hub.admin);
    const failed = await eventually(async () => (await deliveries(sub.id)).find((d) => d.status === 'failed' && d.attempts === 1), {
      timeoutMs: 60_000,
      what: 'a failed attempt',
    });
    expect(failed.last_error).to.equal('HTTP 503: busy');
    expect(failed.next_retry_at).to.be.a('string');
    // The broker offers it again after its backoff; this time the receiver is back.
    await receiver.waitFor(2, { where: (h) => h.path === '/busy', timeoutMs: 60_000, what: 'a retry' });
    replies.delete('/busy');
    const done = await eventually(async () => (await deliveries(sub.id)).find((d) => d.status === 'success'), {
      timeoutMs: 60_000,
      what: 'success after retries',
    });
    expect(done.attempts).to.be.at.least(2);
    expect(await metrics(labelledProc)).to.match(/brokkr_agent_webhook_deliveries_total\{outcome="failure",service="agent"\} [1-9]/);
  });

  it('an agent without every target label never receives the delivery (it polls, but gets nothing)', async () => {
    const text = await metrics(plainProc);
    expect(text).to.match(/brokkr_agent_webhook_polls_total\{status="empty",service="agent"\} [1-9]/);
    expect(text).to.not.match(/brokkr_agent_webhook_polls_total\{status="claimed"/);
    expect(text).to.not.match(/brokkr_agent_webhook_deliveries_total\{outcome=/);
    const all = await hub.admin.get<AnyJson[]>('/webhook-deliveries');
    expect(all.body.length).to.be.at.least(2);
    for (const d of all.body) expect(d.acquired_by, `delivery ${d.id}`).to.equal(labelled.id);
  });

  it('on SIGTERM a POST in flight finishes and its result is reported before the agent exits', async () => {
    replies.set('/slow', { status: 200, body: 'ok', delayMs: 2000 });
    const sub = await subscribe('/slow');
    await createStack(hub.admin);
    await receiver.waitFor(1, { where: (h) => h.path === '/slow', timeoutMs: 60_000, what: 'the slow POST to start' });
    expect(await labelledProc.stop()).to.equal(0);
    const [delivery] = await deliveries(sub.id);
    expect(delivery).to.include({ status: 'success', attempts: 1 });
  });
});

import { expect } from 'chai';
import { freePort, spawnService, startWebhookReceiver, useTestInfra, type RunningService, type WebhookReceiver } from '@brokkr/testkit';
import { insertAgentRow, startTestApi, type TestApi } from './support/index.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** api commit → outbox → JetStream → webhook-dispatcher → receiver, for a `workorder.*` subscription. */
describe('api work orders: webhooks', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let receiver: WebhookReceiver;
  let dispatcher: RunningService;

  before(async () => {
    const env = { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX, BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    api = await startTestApi(infra, { env });
    receiver = await startWebhookReceiver();
    const port = await freePort();
    dispatcher = await spawnService({
      service: 'webhook-dispatcher',
      env: {
        BROKKR__DATABASE__URL: api.database.url,
        BROKKR__NATS__URL: api.natsUrl,
        BROKKR__HEALTH__PORT: String(port),
        // One request at a time to the receiver: deliveries go out in event order.
        BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY: '1',
        ...env,
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
  });
  after(async () => {
    await dispatcher?.stop();
    await receiver?.close();
    await api?.stop();
  });

  it('a workorder.* subscription receives created, claimed and completed, in that order', async () => {
    const sub = await api.admin.post('/webhooks', { name: 'wo', url: receiver.url, event_types: ['workorder.*'] });
    expect(sub.status, sub.text).to.equal(201);
    const agent = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const client = api.admin.as(agent.pak);
    const order = await api.admin.post('/work-orders', { work_type: 'build', yaml_content: 'x', target_agent_ids: [agent.id] });
    expect(order.status).to.equal(201);
    const id = order.body.id as string;
    expect((await client.post(`/work-orders/${id}/claim`, { agent_id: agent.id })).status).to.equal(200);
    expect((await client.post(`/work-orders/${id}/complete`, { success: true, message: 'sha256:1' })).status).to.equal(200);

    const hits = await receiver.waitFor(3, { where: (h) => h.body.includes(id), timeoutMs: 60_000, what: 'three work-order webhooks' });
    const events = hits.map((h) => JSON.parse(h.body) as { event_type: string; data: Record<string, unknown> });
    expect(events.map((e) => e.event_type)).to.deep.equal(['workorder.created', 'workorder.claimed', 'workorder.completed']);
    expect(events[1]!.data).to.include({ work_order_id: id, agent_id: agent.id, work_type: 'build' });
    expect(events[2]!.data).to.include({ work_order_log_id: id, success: true, result_message: 'sha256:1', agent_id: agent.id });
  });
});

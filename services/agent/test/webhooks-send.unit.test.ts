import { expect } from 'chai';
import { Agent } from 'undici';
import { startWebhookReceiver, type WebhookReceiver } from '@brokkr/testkit';
import { sendDelivery } from '../src/webhooks/send.ts';
import type { PendingWebhookDelivery } from '../src/webhooks/types.ts';

const delivery = (url: string, extra: Partial<PendingWebhookDelivery> = {}): PendingWebhookDelivery => ({
  id: '0b9f3c5e-1111-4222-8333-444455556666',
  subscription_id: '0b9f3c5e-aaaa-4bbb-8ccc-ddddeeeeffff',
  event_type: 'stack.created',
  payload: '{"id":"e1","event_type":"stack.created","data":{"ü":1}}',
  url,
  auth_header: null,
  timeout_seconds: 5,
  max_retries: 5,
  attempts: 0,
  ...extra,
});

/** sendDelivery against real HTTP servers on loopback: headers, outcomes and Brokkr's error wording. */
describe('agent webhook sender', function () {
  this.timeout(30_000);
  const dispatcher = new Agent({ keepAliveTimeout: 1000 });
  const send = (d: PendingWebhookDelivery, signal = new AbortController().signal) =>
    sendDelivery(d, { dispatcher, signal, userAgent: 'brokkr-agent/test' });
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver.close();
    await dispatcher.close();
  });
  beforeEach(() => {
    receiver.respond = () => ({ status: 204 });
  });

  it('POSTs the payload verbatim with Brokkr headers, Authorization and the broker-signed headers', async () => {
    const signed = {
      'webhook-id': 'e1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,abc',
      'content-type': 'text/evil',
      other: 'x',
    };
    const result = await send(delivery(receiver.url, { auth_header: 'Bearer s3cret', webhook_headers: signed }));
    expect(result.outcome).to.equal('success');
    expect(result.outcome !== 'skipped' && result.report).to.deep.include({ success: true, status_code: 204 });
    const hit = receiver.requests.at(-1)!;
    expect(hit.method).to.equal('POST');
    expect(hit.body).to.equal(delivery('').payload);
    expect(hit.headers).to.include({
      'content-type': 'application/json',
      authorization: 'Bearer s3cret',
      'x-brokkr-event-type': 'stack.created',
      'x-brokkr-delivery-id': delivery('').id,
      'webhook-id': 'e1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,abc',
      'user-agent': 'brokkr-agent/test',
    });
    expect(hit.headers.other).to.equal(undefined);
  });

  it('sends no Authorization or signature headers when there are none (Brokkr broker)', async () => {
    await send(delivery(receiver.url));
    const hit = receiver.requests.at(-1)!;
    expect(hit.headers.authorization).to.equal(undefined);
    expect(hit.headers['webhook-signature']).to.equal(undefined);
  });

  it('reports a non-2xx answer as HTTP <code>: <first 500 characters of the body>', async () => {
    receiver.respond = () => ({ status: 503, body: 'é'.repeat(3000) });
    const result = await send(delivery(receiver.url));
    expect(result.outcome).to.equal('failure');
    if (result.outcome === 'skipped') throw new Error('unexpected');
    expect(result.report).to.include({ success: false, status_code: 503 });
    expect(result.report.error).to.equal(`HTTP 503: ${'é'.repeat(500)}`);
    expect(result.report.duration_ms).to.be.a('number');
  });

  it('does not follow redirects', async () => {
    receiver.respond = (req) =>
      req.path === '/elsewhere' ? { status: 200 } : { status: 307, headers: { location: receiver.urlFor('/elsewhere') } };
    const before = receiver.requests.length;
    const result = await send(delivery(receiver.url));
    expect(result.outcome).to.equal('failure');
    expect(result.outcome !== 'skipped' && result.report.status_code).to.equal(307);
    // A redirect would have been followed before sendDelivery returned.
    expect(receiver.requests.length).to.equal(before + 1);
    expect(receiver.received((r) => r.path === '/elsewhere')).to.have.length(0);
  });

  it('times out after timeout_seconds: "Request timed out"', async () => {
    receiver.respond = () => ({ hang: true });
    const result = await send(delivery(receiver.url, { timeout_seconds: 1 }));
    expect(result.outcome).to.equal('error');
    expect(result.outcome !== 'skipped' && result.report).to.deep.include({ success: false, error: 'Request timed out' });
    expect(result.outcome !== 'skipped' && result.report.status_code).to.equal(undefined);
  });

  it('a refused connection is "Connection failed", a bad URL a request error', async () => {
    const refused = await send(delivery('http://127.0.0.1:9/hook'));
    expect(refused.outcome).to.equal('error');
    expect(refused.outcome !== 'skipped' && refused.report.error).to.match(/^Connection failed: .*ECONNREFUSED/);
    const bad = await send(delivery('not a url'));
    expect(bad.outcome).to.equal('error');
    expect(bad.outcome !== 'skipped' && bad.report.error).to.match(/^Request error: /);
  });

  it('a POST cut off by the shutdown grace is skipped (nothing to report)', async () => {
    receiver.respond = () => ({ hang: true });
    const stop = new AbortController();
    const id = 'cut-off-by-shutdown';
    const pending = send(delivery(receiver.url, { timeout_seconds: 30, webhook_headers: { 'webhook-id': id } }), stop.signal);
    // Cut it off once it is really in flight (the receiver has it), not after a guessed delay.
    await receiver.waitFor(1, { where: (r) => r.webhookId === id, what: 'the POST in flight' });
    stop.abort();
    expect(await pending).to.deep.equal({ outcome: 'skipped' });
  });
});

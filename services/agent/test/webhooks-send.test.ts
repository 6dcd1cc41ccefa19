import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Agent } from 'undici';
import { sendDelivery } from '../src/webhooks/send.ts';
import type { PendingWebhookDelivery } from '../src/webhooks/types.ts';

interface Hit {
  method: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real receiver on loopback; `answer` decides the response per request. */
async function startReceiver(answer: (res: ServerResponse, hit: Hit) => void) {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const hit = { method: req.method, headers: req.headers, body };
      hits.push(hit);
      answer(res, hit);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    hits,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

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
  const send = (d: PendingWebhookDelivery, signal = new AbortController().signal) => sendDelivery(d, { dispatcher, signal, userAgent: 'brokkr-agent/test' });
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let reply: (res: ServerResponse, hit: Hit) => void;

  before(async () => {
    receiver = await startReceiver((res, hit) => reply(res, hit));
  });
  after(async () => {
    await receiver.close();
    await dispatcher.close();
  });
  beforeEach(() => {
    reply = (res) => res.writeHead(204).end();
  });

  it('POSTs the payload verbatim with Brokkr headers, Authorization and the broker-signed headers', async () => {
    const signed = { 'webhook-id': 'e1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abc', 'content-type': 'text/evil', other: 'x' };
    const result = await send(delivery(receiver.url(), { auth_header: 'Bearer s3cret', webhook_headers: signed }));
    expect(result.outcome).to.equal('success');
    expect(result.outcome !== 'skipped' && result.report).to.deep.include({ success: true, status_code: 204 });
    const hit = receiver.hits.at(-1)!;
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
    await send(delivery(receiver.url()));
    const hit = receiver.hits.at(-1)!;
    expect(hit.headers.authorization).to.equal(undefined);
    expect(hit.headers['webhook-signature']).to.equal(undefined);
  });

  it('reports a non-2xx answer as HTTP <code>: <first 500 characters of the body>', async () => {
    reply = (res) => res.writeHead(503).end('é'.repeat(3000));
    const result = await send(delivery(receiver.url()));
    expect(result.outcome).to.equal('failure');
    if (result.outcome === 'skipped') throw new Error('unexpected');
    expect(result.report).to.include({ success: false, status_code: 503 });
    expect(result.report.error).to.equal(`HTTP 503: ${'é'.repeat(500)}`);
    expect(result.report.duration_ms).to.be.a('number');
  });

  it('does not follow redirects', async () => {
    reply = (res, hit) => (hit.headers['x-redirected'] ? res.writeHead(200).end() : res.writeHead(307, { location: receiver.url('/elsewhere') }).end());
    const before = receiver.hits.length;
    const result = await send(delivery(receiver.url()));
    expect(result.outcome).to.equal('failure');
    expect(result.outcome !== 'skipped' && result.report.status_code).to.equal(307);
    expect(receiver.hits.length).to.equal(before + 1);
  });

  it('times out after timeout_seconds: "Request timed out"', async () => {
    reply = () => undefined; // never answers
    const result = await send(delivery(receiver.url(), { timeout_seconds: 1 }));
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
    reply = () => undefined;
    const stop = new AbortController();
    const pending = send(delivery(receiver.url(), { timeout_seconds: 30 }), stop.signal);
    setTimeout(() => stop.abort(), 200);
    expect(await pending).to.deep.equal({ outcome: 'skipped' });
  });
});

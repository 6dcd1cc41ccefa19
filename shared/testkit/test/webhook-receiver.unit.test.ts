import { expect } from 'chai';
import { startWebhookReceiver, type WebhookReceiver } from '../src/index.ts';

const post = (url: string, body: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
    redirect: 'manual',
    ...(signal ? { signal } : {}),
  });

describe('startWebhookReceiver', () => {
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('records method, path, headers and the raw body, and answers 200 by default', async () => {
    const res = await post(receiver.urlFor('/a?x=1'), '{"ü": 1}', { 'webhook-id': 'e1', authorization: 'Bearer t' });
    expect(res.status).to.equal(200);
    const [got] = receiver.requests;
    expect(got).to.include({ method: 'POST', path: '/a?x=1', body: '{"ü": 1}', webhookId: 'e1' });
    expect(got!.headers).to.include({ authorization: 'Bearer t', 'content-type': 'application/json' });
    expect(receiver.url).to.equal(`http://127.0.0.1:${receiver.port}/hook`);
  });

  it('answers what `respond` says, with the count of the webhook-id so far', async () => {
    receiver.respond = (req, nth) => (nth === 1 ? { status: 429, headers: { 'retry-after': '120' }, body: 'slow down' } : { status: 204 });
    const first = await post(receiver.url, '{}', { 'webhook-id': 'e2' });
    expect([first.status, first.headers.get('retry-after'), await first.text()]).to.deep.equal([429, '120', 'slow down']);
    expect((await post(receiver.url, '{}', { 'webhook-id': 'e2' })).status).to.equal(204);
    expect((await post(receiver.url, '{}', { 'webhook-id': 'e3' })).status).to.equal(429);
    expect([...receiver.countById]).to.deep.equal([
      ['e2', 2],
      ['e3', 1],
    ]);
  });

  it('can answer a redirect depending on the request', async () => {
    receiver.respond = (req) => (req.path === '/old' ? { status: 307, headers: { location: receiver.urlFor('/new') } } : {});
    const res = await post(receiver.urlFor('/old'), '{}');
    expect([res.status, res.headers.get('location')]).to.deep.equal([307, receiver.urlFor('/new')]);
  });

  it('answers after a delay', async () => {
    receiver.respond = () => ({ status: 202, delayMs: 300 });
    const started = Date.now();
    expect((await post(receiver.url, '{}')).status).to.equal(202);
    expect(Date.now() - started).to.be.at.least(250);
  });

  it('waitFor resolves on arrival, with the matching requests', async () => {
    const waiting = receiver.waitFor(2, { where: (r) => r.path === '/x' });
    await post(receiver.urlFor('/y'), '1');
    await post(receiver.urlFor('/x'), '2');
    await post(receiver.urlFor('/x'), '3');
    expect((await waiting).map((r) => r.body)).to.deep.equal(['2', '3']);
    expect(receiver.received((r) => r.path === '/y')).to.have.length(1);
    // Already there: at once.
    expect(await receiver.waitFor(1)).to.have.length(3);
  });

  it('waitFor says what it waited for when it times out', async () => {
    const err = await receiver.waitFor(1, { timeoutMs: 50, what: 'the POST' }).catch((e: Error) => e);
    expect((err as Error).message).to.equal('timed out after 50 ms waiting for the POST: 0 arrived');
  });

  it('hangs until the sender gives up, and close() cuts hanging replies and pending waits', async () => {
    receiver.respond = () => ({ hang: true });
    const sender = new AbortController();
    const pending = post(receiver.url, '{}', {}, sender.signal).catch((e: Error) => e.name);
    await receiver.waitFor(1);
    sender.abort();
    expect(await pending).to.equal('AbortError');

    const cut = post(receiver.url, '{}').then(
      () => 'answered',
      () => 'cut',
    );
    await receiver.waitFor(2);
    const waiting = receiver.waitFor(5).catch((e: Error) => e.message);
    await receiver.close();
    expect(await cut).to.equal('cut');
    expect(await waiting).to.match(/^the receiver was closed waiting for 5 request/);
  });
});

import { expect } from 'chai';
import { startWebhookReceiver, TestClient, type WebhookReceiver } from '../src/index.ts';

/** The client against the test receiver, which records what it sent and answers what we script. */
describe('TestClient', () => {
  let server: WebhookReceiver;
  let base: string;

  before(async () => {
    server = await startWebhookReceiver();
    base = `http://127.0.0.1:${server.port}`;
  });
  after(() => server.close());

  const json =
    (body: unknown, status = 200) =>
    () => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) });

  it('sends JSON with the PAK under /api/v1 and parses a JSON answer', async () => {
    server.respond = json({ id: 'a1' }, 201);
    const res = await new TestClient(base, 'pak-1').post('/stacks', { name: 's' }, { query: { wait: 5, skip: undefined } });
    expect([res.status, res.body]).to.deep.equal([201, { id: 'a1' }]);
    expect(res.headers.get('content-type')).to.match(/json/);
    const sent = server.requests.at(-1)!;
    expect(sent).to.include({ method: 'POST', path: '/api/v1/stacks?wait=5', body: '{"name":"s"}' });
    expect(sent.headers).to.include({ authorization: 'Bearer pak-1', 'content-type': 'application/json' });
  });

  it('leaves body undefined for a text answer and keeps the text', async () => {
    server.respond = () => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'OK' });
    const res = await new TestClient(base).get('//healthz');
    expect([res.status, res.body, res.text]).to.deep.equal([200, undefined, 'OK']);
    const sent = server.requests.at(-1)!;
    expect(sent.path).to.equal('/healthz');
    expect(sent.headers.authorization).to.equal(undefined);
  });

  it('as() switches the PAK, a null pak option sends none, raw bodies go as they are', async () => {
    server.respond = () => ({ status: 204 });
    const admin = new TestClient(base, 'admin');
    await admin.as('agent').put('/x', { a: 1 });
    expect(server.requests.at(-1)!.headers.authorization).to.equal('Bearer agent');
    await admin.request('PATCH', '/x', { raw: 'a: 1', contentType: 'application/yaml', pak: null });
    const sent = server.requests.at(-1)!;
    expect(sent).to.include({ method: 'PATCH', body: 'a: 1' });
    expect(sent.headers).to.include({ 'content-type': 'application/yaml' });
    expect(sent.headers.authorization).to.equal(undefined);
    await new TestClient(base, null, '').delete('/plain');
    expect(server.requests.at(-1)).to.include({ method: 'DELETE', path: '/plain' });
  });

  it('must() returns the body of a 2xx answer and throws on anything else', async () => {
    server.respond = json([{ id: 1 }]);
    expect(await new TestClient(base, 'p').must('GET', '/generators')).to.deep.equal([{ id: 1 }]);
    server.respond = json({ code: 'nope' }, 403);
    const err = await new TestClient(base, 'p').must('POST', '/agents', {}).catch((e: Error) => e.message);
    expect(err).to.equal('POST /agents → 403: {"code":"nope"}');
  });
});

import { expect } from 'chai';
import { generatePak } from '@brokkr/pak';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { ApiClient, spawnApi, uniqueName, type ApiProcess, type ApiResponse } from './support/index.ts';
import { startPgProxy, type PgProxy } from './support/pg-proxy.ts';

function expectUnavailable(res: ApiResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(503);
  expect(res.headers.get('retry-after'), what).to.match(/^\d+$/);
  expect(res.headers.get('content-type'), what).to.match(/^application\/json/);
  expect(res.body.code, what).to.equal('service_unavailable');
  expect(res.body.message, what).to.be.a('string');
}

/**
 * While PostgreSQL is restarting or down, reads and writes answer 503
 * service_unavailable with Retry-After (the probe saw 500s), and the api recovers by itself.
 * The api reaches the test database through a proxy the test can cut.
 */
describe('api while PostgreSQL is unavailable', function () {
  this.timeout(90_000);
  const infra = useTestInfra({ nats: true });
  let proxy: PgProxy;
  let api: ApiProcess;
  let admin: ApiClient;
  let stranger: ApiClient;

  before(async () => {
    proxy = await startPgProxy(infra.db.url);
    const { pak, hash } = generatePak();
    api = await spawnApi({ BROKKR__DATABASE__URL: proxy.url, BROKKR__NATS__URL: infra.nats.url, BROKKR__BROKER__PAK_HASH: hash });
    admin = new ApiClient(api.url, pak);
    // A PAK the api has never seen: resolving it needs the database.
    stranger = new ApiClient(api.url, generatePak().pak);
  });
  after(async () => {
    await api?.service.stop();
    await proxy?.close();
  });

  async function everyKindOfRequest(what: string): Promise<void> {
    expectUnavailable(await admin.get('/generators'), `${what}: read`);
    expectUnavailable(await admin.get('/agents'), `${what}: read`);
    expectUnavailable(await admin.post('/generators', { name: uniqueName('gen') }), `${what}: write`);
    expectUnavailable(await admin.post('/webhooks', { name: 'w', url: 'https://example.com/x', event_types: ['*'] }), `${what}: write`);
    // Not 401: whether the PAK is valid cannot be known without the database.
    expectUnavailable(await stranger.get('/generators'), `${what}: unknown PAK`);
  }

  it('answers 503 + Retry-After when the server is gone, and when it is starting up (57P03); then recovers', async () => {
    expect((await admin.get('/generators')).status).to.equal(200);
    expect((await admin.post('/generators', { name: uniqueName('gen') })).status).to.equal(201);

    await proxy.setMode('down');
    await everyKindOfRequest('server gone');

    await proxy.setMode('starting');
    await everyKindOfRequest('starting up');

    await proxy.setMode('up');
    await eventually(async () => (await admin.get('/generators')).status === 200, { what: 'reads again' });
    const created = await admin.post('/generators', { name: uniqueName('gen') });
    expect(created.status, created.text).to.equal(201);
    expect((await stranger.get('/generators')).status).to.equal(401);
    expect(api.service.child.exitCode, api.service.output()).to.equal(null);
    expect(api.service.output()).to.not.include('"level":50');
  });
});

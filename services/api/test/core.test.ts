import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { startTestApi, type TestApi } from './support/index.ts';

describe('api core: probes, docs, errors', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('serves /healthz and /readyz as text', async () => {
    const health = await api.anonymous.get('//healthz');
    expect(health.status).to.equal(200);
    expect(health.text).to.equal('OK');
    const ready = await api.anonymous.get('//readyz');
    expect(ready.status).to.equal(200);
    expect(ready.text).to.equal('Ready');
  });

  it('serves the OpenAPI 3.1 document and an HTML page', async () => {
    const doc = await api.anonymous.get('//docs/openapi.json');
    expect(doc.status).to.equal(200);
    expect(doc.body.openapi).to.equal('3.1.0');
    expect(doc.body.paths).to.have.property('/api/v1/auth/pak');
    expect(doc.body.paths).to.have.property('/api/v1/generators/{id}');
    const page = await api.anonymous.get('//docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
  });

  it('labels metrics with route templates, never raw paths', async () => {
    await api.admin.get(`/generators/${crypto.randomUUID()}`);
    await api.admin.get('/no/such/route/abc123');
    const metrics = await api.anonymous.get('//metrics');
    expect(metrics.status).to.equal(200);
    expect(metrics.text).to.include('brokkr_http_requests_total{endpoint="/api/v1/generators/:id",method="GET",status="404"');
    expect(metrics.text).to.not.include('abc123');
    expect(metrics.text).to.include('endpoint="unmatched"');
    for (const name of [
      'brokkr_active_agents',
      'brokkr_stacks_total',
      'brokkr_deployment_objects_total',
      'brokkr_http_request_duration_seconds',
    ]) {
      expect(metrics.text).to.include(name);
    }
    expect(metrics.text).to.match(/brokkr_default_admin_pak_hash_in_use\{[^}]*\} 0/);
  });

  it('answers unknown /api routes with JSON 404 not_found', async () => {
    const res = await api.admin.get('/nope');
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('not_found');
    const outside = await api.anonymous.get('//api/v2/whatever');
    expect(outside.status).to.equal(404);
    expect(outside.body.code).to.equal('not_found');
  });

  it('answers a known path with another method with JSON 405', async () => {
    const res = await api.admin.request('PATCH', '/generators');
    expect(res.status).to.equal(405);
    expect(res.body.code).to.equal('method_not_allowed');
    expect(res.headers.get('allow')).to.include('GET');
  });

  it('maps malformed JSON, wrong content type and oversized bodies to JSON 4xx', async () => {
    const malformed = await api.admin.request('POST', '/generators', { raw: '{"name": ', contentType: 'application/json' });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.code).to.equal('invalid_json');

    const wrongType = await api.admin.request('POST', '/generators', { raw: 'name=x', contentType: 'text/plain' });
    expect(wrongType.status).to.equal(415);
    expect(wrongType.body.code).to.equal('unsupported_media_type');

    const big = await api.admin.post('/generators', { name: 'x', description: 'y'.repeat(3 * 1024 * 1024) });
    expect(big.status).to.equal(413);
    expect(big.body.code).to.equal('payload_too_large');

    const schema = await api.admin.post('/generators', { name: 42 });
    expect(schema.status).to.equal(422);
    expect(schema.body.code).to.equal('invalid_request_body');
    expect(schema.body.details.issues[0].path).to.equal('name');
  });

  it('maps bad ids and overlong values to 400, never 500', async () => {
    const badId = await api.admin.get('/generators/not-a-uuid');
    expect(badId.status).to.equal(400);
    expect(badId.body.code).to.equal('invalid_id');

    const long = await api.admin.post('/generators', { name: 'n'.repeat(300) });
    expect(long.status).to.equal(400);
    expect(long.body.code).to.equal('invalid_input');

    const nul = await api.admin.post('/generators', { name: 'bad\u0000name' });
    expect(nul.status).to.be.within(400, 499);
  });
});

import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { auditMessages, createGenerator, createStack, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';

const BROKKR_STACK_FIELDS = ['created_at', 'deleted_at', 'description', 'generator_id', 'id', 'name', 'updated_at'];

/**
 * Expiring stacks through the API (maintenance's deletion is tested in services/maintenance):
 * an expiry given at creation or set later, moved, cleared; who may; bad input changes nothing;
 * a stack without one keeps Brokkr's exact shape.
 */
describe('api stack expiry (preview stacks)', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let owner: { id: string; client: ApiClient };
  let other: ApiClient;

  before(async () => {
    api = await startTestApi(infra);
    const gen = await createGenerator(api.admin);
    owner = { id: gen.generator.id, client: gen.client };
    other = (await createGenerator(api.admin)).client;
  });
  after(async () => {
    await api?.stop();
  });

  const expiresAtOf = async (id: string) => (await api.sql.query('SELECT expires_at FROM stacks WHERE id = $1', [id])).rows[0]!.expires_at;

  it('a stack without an expiry keeps the Stack shape of Brokkr (no expires_at field)', async () => {
    const stack = await createStack(owner.client, { generator_id: owner.id });
    const got = await owner.client.get(`/stacks/${stack.id}`);
    expect(Object.keys(got.body).sort()).to.deep.equal(BROKKR_STACK_FIELDS);
    const expiry = await owner.client.get(`/stacks/${stack.id}/expiry`);
    expect(expiry.status).to.equal(200);
    expect(expiry.body).to.deep.equal({ stack_id: stack.id, expires_at: null });
  });

  it('POST /stacks with ttl_seconds: the stack carries expires_at in every read', async () => {
    const before = Date.now();
    const res = await owner.client.post('/stacks', { name: uniqueName('preview'), generator_id: owner.id, ttl_seconds: 3600 });
    expect(res.status, res.text).to.equal(201);
    const at = Date.parse(res.body.expires_at);
    expect(at).to.be.within(before + 3600_000 - 1000, Date.now() + 3600_000 + 1000);
    const got = await owner.client.get(`/stacks/${res.body.id}`);
    expect(got.body.expires_at).to.equal(res.body.expires_at);
    const listed = (await owner.client.get('/stacks')).body.find((s: { id: string }) => s.id === res.body.id);
    expect(listed.expires_at).to.equal(res.body.expires_at);
  });

  it('PUT /stacks/{id}/expiry sets and moves the expiry (expires_at or ttl_seconds); DELETE clears it', async () => {
    const stack = await createStack(owner.client, { generator_id: owner.id });
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const set = await owner.client.put(`/stacks/${stack.id}/expiry`, { expires_at: at });
    expect(set.status, set.text).to.equal(200);
    expect(set.body).to.deep.equal({ stack_id: stack.id, expires_at: at });
    await api.sql.query('UPDATE stacks SET expiry_announced_at = now() WHERE id = $1', [stack.id]);

    const moved = await api.admin.put(`/stacks/${stack.id}/expiry`, { ttl_seconds: 120 });
    expect(moved.status, moved.text).to.equal(200);
    const { rows } = await api.sql.query('SELECT expiry_announced_at FROM stacks WHERE id = $1', [stack.id]);
    expect(rows[0]!.expiry_announced_at, 'a moved expiry is announced again').to.equal(null);

    const cleared = await owner.client.delete(`/stacks/${stack.id}/expiry`);
    expect(cleared.status).to.equal(200);
    expect(cleared.body).to.deep.equal({ stack_id: stack.id, expires_at: null });
    expect(await expiresAtOf(stack.id)).to.equal(null);
    const actions = async () =>
      (await auditMessages(api.natsUrl))
        .filter((a) => a.resource_id === stack.id && a.action.startsWith('stack.expiry_'))
        .map((a) => a.action);
    await eventually(async () => (await actions()).length === 3, { what: 'three audit entries' });
    expect(await actions()).to.deep.equal(['stack.expiry_set', 'stack.expiry_set', 'stack.expiry_cleared']);
  });

  it('bad input is a 400 and changes nothing', async () => {
    const stack = await createStack(owner.client, { generator_id: owner.id });
    // Shape errors are 422 invalid_request_body, as every body Brokkr cannot deserialize.
    const cases: [unknown, number, string][] = [
      [{}, 400, 'invalid_expiry'],
      [{ ttl_seconds: 60, expires_at: new Date(Date.now() + 60_000).toISOString() }, 400, 'invalid_expiry'],
      [{ expires_at: new Date(Date.now() - 60_000).toISOString() }, 400, 'expiry_in_past'],
      [{ ttl_seconds: 0 }, 422, 'invalid_request_body'],
      [{ ttl_seconds: 1.5 }, 422, 'invalid_request_body'],
      [{ expires_at: 'tomorrow' }, 422, 'invalid_request_body'],
    ];
    for (const [body, status, code] of cases) {
      const res = await owner.client.put(`/stacks/${stack.id}/expiry`, body);
      expect(res.status, JSON.stringify(body)).to.equal(status);
      expect(res.body.code, JSON.stringify(body)).to.equal(code);
    }
    const create = await owner.client.post('/stacks', {
      name: uniqueName('p'),
      generator_id: owner.id,
      ttl_seconds: 5,
      expires_at: '2030-01-01T00:00:00Z',
    });
    expect(create.status).to.equal(400);
    expect((await api.sql.query('SELECT count(*)::int AS n FROM stacks WHERE generator_id = $1', [owner.id])).rows[0]!.n).to.be.greaterThan(
      0,
    );
    expect(await expiresAtOf(stack.id)).to.equal(null);
  });

  it("only the stack's owner or an admin may read or change its expiry", async () => {
    const stack = await createStack(owner.client, { generator_id: owner.id });
    expect((await other.get(`/stacks/${stack.id}/expiry`)).status).to.equal(403);
    const denied = await other.put(`/stacks/${stack.id}/expiry`, { ttl_seconds: 60 });
    expect(denied.status).to.equal(403);
    expect(denied.body.code).to.equal('stack_not_owned');
    expect((await other.delete(`/stacks/${stack.id}/expiry`)).status).to.equal(403);
    expect(await expiresAtOf(stack.id)).to.equal(null);
    expect((await owner.client.put('/stacks/00000000-0000-4000-8000-000000000000/expiry', { ttl_seconds: 60 })).status).to.equal(404);
  });
});

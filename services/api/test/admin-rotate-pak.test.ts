import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  ApiClient,
  adminGeneratorId,
  auditMessages,
  createAgent,
  createGenerator,
  startTestApi,
  type ApiProcess,
  type TestApi,
} from './support/index.ts';

describe('POST /admin/rotate-pak', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;

  before(async () => {
    // A long cache TTL: only the NATS invalidation can make the replica forget the old hash.
    api = await startTestApi(infra, { env: { BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '60' } });
    replica = await api.spawnReplica();
  });

  after(async () => {
    await api?.stop();
  });

  it('refuses generators and agents (403 admin_required) and changes nothing', async () => {
    const { client, pak } = await createGenerator(api.admin);
    const res = await client.post('/admin/rotate-pak', { current_pak: pak });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('admin_required');
    const { initial_pak, client: agentClient } = await createAgent(api.admin);
    const asAgent = await agentClient.post('/admin/rotate-pak', { current_pak: initial_pak });
    expect(asAgent.status).to.equal(403);
    expect(asAgent.body.code).to.equal('admin_required');
    expect((await api.admin.post('/auth/pak')).body.admin).to.equal(true);
  });

  it('refuses a missing or unknown PAK with 401 JSON', async () => {
    const res = await api.anonymous.post('/admin/rotate-pak', { current_pak: api.adminPak });
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('unauthorized');
  });

  it('needs the current admin PAK in the body: missing → 422/415, another PAK → 403 current_pak_mismatch; nothing changes', async () => {
    expect((await api.admin.post('/admin/rotate-pak', {})).status).to.equal(422);
    expect((await api.admin.post('/admin/rotate-pak')).status).to.be.oneOf([415, 422]);
    const { pak: generatorPak } = await createGenerator(api.admin);
    for (const current of [generatorPak, 'not-a-pak', `${api.adminPak}x`]) {
      const res = await api.admin.post('/admin/rotate-pak', { current_pak: current });
      expect(res.status, current).to.equal(403);
      expect(res.body.code).to.equal('current_pak_mismatch');
    }
    const { rows } = await api.sql.query<{ pak_hash: string }>('SELECT pak_hash FROM admin_role');
    expect(rows[0]!.pak_hash).to.equal(api.adminHash);
    expect((await api.admin.post('/auth/pak')).body.admin).to.equal(true);
  });

  it('mints a new admin PAK; the old one is rejected on every replica at once, the new one accepted', async () => {
    const oldOnReplica = new ApiClient(replica.url, api.adminPak);
    const adminGenerator = await adminGeneratorId(api.admin);
    // Warm both replicas' caches with the old PAK.
    expect((await oldOnReplica.post('/auth/pak')).body.admin).to.equal(true);
    expect((await api.admin.post('/auth/pak')).body.admin).to.equal(true);

    const res = await api.admin.post('/admin/rotate-pak', { current_pak: api.adminPak });
    expect(res.status).to.equal(200);
    const newPak = res.body.pak as string;
    expect(newPak).to.match(/^brokkr_BR[1-9A-HJ-NP-Za-km-z]{6}_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(res.body.rotated_at).to.be.a('string');

    // Old PAK: 401 everywhere, also as the admin-generator that first start linked to it.
    expect((await api.admin.post('/auth/pak')).status).to.equal(401);
    expect((await oldOnReplica.post('/auth/pak')).status).to.equal(401);
    expect((await oldOnReplica.get('/stacks')).status).to.equal(401);

    // New PAK: admin on both replicas.
    const fresh = await new ApiClient(replica.url, newPak).post('/auth/pak');
    expect(fresh.status).to.equal(200);
    expect(fresh.body).to.deep.equal({ admin: true, agent: null, generator: null, readonly: false });
    expect((await api.admin.as(newPak).get('/agents')).status).to.equal(200);

    // Only hashes are stored: the admin row and the linked admin-generator now carry the new hash.
    const { rows } = await api.sql.query<{ pak_hash: string }>('SELECT pak_hash FROM admin_role');
    expect(rows).to.have.length(1);
    expect(rows[0]!.pak_hash).to.not.equal(api.adminHash);
    expect(rows[0]!.pak_hash).to.not.include(newPak.split('_')[2]!);
    const gen = await api.sql.query<{ pak_hash: string }>('SELECT pak_hash FROM generators WHERE id = $1', [adminGenerator]);
    expect(gen.rows[0]!.pak_hash).to.equal(rows[0]!.pak_hash);

    const entry = await eventually(async () => (await auditMessages(api.natsUrl, 'pak.rotated')).find((e) => e.resource_type === 'pak'), {
      what: 'the pak.rotated audit entry',
    });
    expect(entry.actor_type).to.equal('admin');
    expect(entry.details).to.deep.equal({ name: 'admin', via: 'api' });
    expect(JSON.stringify(entry)).to.not.include(newPak.split('_')[2]!);
  });

  it('is listed in the OpenAPI document with its errors', async () => {
    const doc = await api.anonymous.get('//docs/openapi.json');
    const op = doc.body.paths['/api/v1/admin/rotate-pak']?.post;
    expect(op, 'operation').to.not.equal(undefined);
    expect(Object.keys(op.responses)).to.include.members(['200', '401', '403', '422']);
    expect(op.requestBody.required).to.equal(true);
  });
});

import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { ApiClient, createGenerator, startTestApi, type ApiProcess, type TestApi } from './support/index.ts';

describe('api PAK cache invalidation across replicas', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;

  before(async () => {
    // A long TTL: only the NATS invalidation can make the second replica forget a hash.
    api = await startTestApi(infra, { env: { BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '60' } });
    replica = await api.spawnReplica();
  });

  after(async () => {
    await api?.stop();
  });

  it('rejects the old generator PAK on the other replica right after a rotation', async () => {
    const { generator, pak } = await createGenerator(api.admin);
    const onReplica = new ApiClient(replica.url, pak);
    // Warm both caches.
    expect((await onReplica.post('/auth/pak')).status).to.equal(200);
    expect((await api.admin.as(pak).post('/auth/pak')).status).to.equal(200);

    const rotated = await api.admin.as(pak).post(`/generators/${generator.id}/rotate-pak`);
    expect(rotated.status).to.equal(201);

    expect((await onReplica.post('/auth/pak')).status).to.equal(401);
    expect((await api.admin.as(pak).post('/auth/pak')).status).to.equal(401);
    const fresh = await onReplica.as(rotated.body.pak).post('/auth/pak');
    expect(fresh.status).to.equal(200);
    expect(fresh.body.generator).to.equal(generator.id);
  });

  it('rejects a deleted generator PAK on the other replica at once', async () => {
    const { generator, pak } = await createGenerator(api.admin);
    const onReplica = new ApiClient(replica.url, pak);
    expect((await onReplica.get(`/generators/${generator.id}`)).status).to.equal(200);
    expect((await api.admin.delete(`/generators/${generator.id}`)).status).to.equal(204);
    expect((await onReplica.post('/auth/pak')).status).to.equal(401);
  });

  it('keeps serving other cached identities', async () => {
    const a = await createGenerator(api.admin);
    const b = await createGenerator(api.admin);
    const bOnReplica = new ApiClient(replica.url, b.pak);
    expect((await bOnReplica.post('/auth/pak')).status).to.equal(200);
    expect((await a.client.post(`/generators/${a.generator.id}/rotate-pak`)).status).to.equal(201);
    expect((await bOnReplica.post('/auth/pak')).status).to.equal(200);
  });
});

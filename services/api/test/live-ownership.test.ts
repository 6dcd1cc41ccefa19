import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createGenerator, createStack, startTestApi, type ApiProcess, type TestApi } from './support/index.ts';
import { Consumer } from './support/cluster-events.ts';

/**
 * `/api/v1/stacks/{id}/live` follows the stack, not only the PAK (docs/security.md, "Live streams
 * follow ownership"): deleting the stack closes every socket on it, moving it to another generator
 * closes the old owner's, on every replica. Brokkr keeps both open.
 */
describe('live sockets follow stack ownership', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;
  const sockets: Consumer[] = [];
  const open = async (url: string, stackId: string, auth: { subprotocol?: string; header?: string }) => {
    const consumer = await Consumer.open(url, `/api/v1/stacks/${stackId}/live`, auth);
    sockets.push(consumer);
    return consumer;
  };

  before(async () => {
    // A long PAK cache: nothing but the stack invalidation can close these sockets.
    api = await startTestApi(infra, { env: { BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: '300' } });
    replica = await api.spawnReplica();
  });
  afterEach(() => sockets.splice(0).forEach((s) => s.close()));
  after(() => api?.stop());

  it("closes the owner's and the admin's sockets on every replica when the stack is deleted", async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const ownerOnReplica = await open(replica.url, stack.id, { subprotocol: gen.pak });
    const adminOnFirst = await open(api.url, stack.id, { header: api.adminPak });

    const deleted = await gen.client.delete(`/stacks/${stack.id}`);
    expect(deleted.status, deleted.text).to.equal(204);

    await ownerOnReplica.waitClosed();
    await adminOnFirst.waitClosed();
    expect(await Consumer.status(replica.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: gen.pak })).to.equal(404);
  });

  it("closes the old owner's sockets on every replica when an admin moves the stack, and keeps the admin's", async () => {
    const oldOwner = await createGenerator(api.admin);
    const newOwner = await createGenerator(api.admin);
    const stack = await createStack(oldOwner.client, { generator_id: oldOwner.generator.id });
    const oldOnReplica = await open(replica.url, stack.id, { subprotocol: oldOwner.pak });
    const oldOnFirst = await open(api.url, stack.id, { header: oldOwner.pak });
    const adminOnReplica = await open(replica.url, stack.id, { header: api.adminPak });

    const current = await api.admin.get<Record<string, unknown>>(`/stacks/${stack.id}`);
    const moved = await api.admin.put(`/stacks/${stack.id}`, { ...current.body, generator_id: newOwner.generator.id });
    expect(moved.status, moved.text).to.equal(200);

    await oldOnReplica.waitClosed();
    await oldOnFirst.waitClosed();
    // The re-check closes every refused socket of the stack in one pass: the admin's is still open after it.
    expect(adminOnReplica.closed).to.equal(false);
    expect(await Consumer.status(replica.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: oldOwner.pak })).to.equal(403);
    expect(await Consumer.status(replica.url, `/api/v1/stacks/${stack.id}/live`, { subprotocol: newOwner.pak })).to.equal(101);
  });

  it("closes the admin's sockets on a generator's stacks when the generator is deleted", async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const adminOnReplica = await open(replica.url, stack.id, { header: api.adminPak });

    const deleted = await api.admin.delete(`/generators/${gen.generator.id}`);
    expect(deleted.status, deleted.text).to.equal(204);

    await adminOnReplica.waitClosed();
  });
});

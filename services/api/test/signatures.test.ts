import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import {
  buildRevocations,
  buildRoot,
  buildTimestamp,
  generateSigningKey,
  sha256Hex,
  signDocument,
  signIntent,
  signWorkOrder,
  type IntentPredicate,
} from '@brokkr/trust';
import { createAgent, createGenerator, createStack, startTestApi, type TestApi } from './support/index.ts';

/**
 * The hub's side of signed intent: it stores what generators sign and what the trust root's holders
 * publish, relays them to agents, and verifies nothing (agents do, in their clusters).
 */
describe('api: signatures and trust metadata (stored and relayed, never made)', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  const key = generateSigningKey();
  const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "1"\n';
  const predicate = (stack: string, p: Partial<IntentPredicate> = {}): IntentPredicate => ({
    stack,
    generator: 'ci',
    version: 1,
    kind: 'raw',
    issuedAt: new Date().toISOString(),
    ...p,
  });

  before(async () => {
    api = await startTestApi(infra);
  });
  after(async () => api?.stop());

  it('stores a generator’s signature of its stack’s content and relays it with the deployment object of that content', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const { agent, client: agentClient } = await createAgent(api.admin, { generator_ids: [gen.generator.id] });
    expect((await gen.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
    const signature = signIntent(yaml, predicate(stack.id, { version: 7 }), key.privateKey);

    const stored = await gen.client.post(`/stacks/${stack.id}/signatures`, { signature });
    expect(stored.status, stored.text).to.equal(201);
    expect(stored.body).to.include({ stack_id: stack.id, content_digest: sha256Hex(yaml), version: 7, work_type: null });
    const again = await gen.client.post(`/stacks/${stack.id}/signatures`, { signature });
    expect(again.body.id, 'the same signature is stored once').to.equal(stored.body.id);

    const signed = await gen.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: yaml });
    const unsigned = await gen.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: `${yaml}# other\n` });
    const ids = [signed.body.id, unsigned.body.id].join(',');
    const relayed = await agentClient.get(`/agents/${agent.id}/signatures`, { query: { deployment_object_ids: ids } });
    expect(relayed.status, relayed.text).to.equal(200);
    expect(relayed.body).to.deep.equal({ deployment_objects: [{ deployment_object_id: signed.body.id, signature }], work_orders: [] });

    // Relayed answers are kept a moment per api process; a signature stored meanwhile is relayed at once.
    const resigned = signIntent(`${yaml}# other\n`, predicate(stack.id, { version: 8 }), key.privateKey);
    expect((await gen.client.post(`/stacks/${stack.id}/signatures`, { signature: resigned })).status).to.equal(201);
    const after = await agentClient.get(`/agents/${agent.id}/signatures`, { query: { deployment_object_ids: ids } });
    expect(after.body.deployment_objects).to.deep.equal([
      { deployment_object_id: signed.body.id, signature },
      { deployment_object_id: unsigned.body.id, signature: resigned },
    ]);

    const other = await createAgent(api.admin);
    expect((await other.client.get(`/agents/${agent.id}/signatures`, { query: { deployment_object_ids: ids } })).status).to.equal(403);
    expect((await api.admin.get(`/agents/${agent.id}/signatures`, { query: { deployment_object_ids: 'nope' } })).status).to.equal(400);
  });

  it('relays to an agent only the signatures of objects it is served and work orders that target it; the admin gets any', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const signature = signIntent(yaml, predicate(stack.id), key.privateKey);
    expect((await gen.client.post(`/stacks/${stack.id}/signatures`, { signature })).status).to.equal(201);
    const object = await gen.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: yaml });
    const issuedAt = new Date().toISOString();
    const job = 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: elsewhere\n';
    const orderSignature = signWorkOrder(
      job,
      { generator: 'ops', workType: 'custom', nonce: 'n-9876543210', issuedAt, expires: issuedAt },
      key.privateKey,
    );
    expect((await api.admin.post('/work-orders/signatures', { signature: orderSignature })).status).to.equal(201);
    const target = await createAgent(api.admin);
    const order = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: job, target_agent_ids: [target.agent.id] });
    const query = { deployment_object_ids: object.body.id, work_order_ids: order.body.id };

    // Another tenant's agent, registered with nobody, asks by id: nothing of either.
    const stranger = await createAgent(api.admin);
    const refused = await stranger.client.get(`/agents/${stranger.agent.id}/signatures`, { query });
    expect(refused.status, refused.text).to.equal(200);
    expect(refused.body).to.deep.equal({ deployment_objects: [], work_orders: [] });
    const admin = await api.admin.get(`/agents/${stranger.agent.id}/signatures`, { query });
    expect(admin.body.deployment_objects).to.have.length(1);
    expect(admin.body.work_orders).to.have.length(1);
    const targeted = await target.client.get(`/agents/${target.agent.id}/signatures`, { query });
    expect(targeted.body).to.deep.equal({
      deployment_objects: [],
      work_orders: [{ work_order_id: order.body.id, signature: orderSignature }],
    });
  });

  it('refuses a signature for another stack, of a stack the caller does not own, and anything that is not a statement', async () => {
    const gen = await createGenerator(api.admin);
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    const mine = await createStack(gen.client, { generator_id: gen.generator.id });
    const elsewhere = await gen.client.post(`/stacks/${stack.id}/signatures`, {
      signature: signIntent(yaml, predicate(mine.id), key.privateKey),
    });
    expect(elsewhere.status).to.equal(400);
    expect(elsewhere.body).to.deep.include({ code: 'signature_stack_mismatch', details: { signed_for: mine.id } });
    const stranger = await createGenerator(api.admin);
    const foreign = await stranger.client.post(`/stacks/${stack.id}/signatures`, {
      signature: signIntent(yaml, predicate(stack.id), key.privateKey),
    });
    expect(foreign.status).to.equal(403);
    const junk = await gen.client.post(`/stacks/${stack.id}/signatures`, {
      signature: { payloadType: 'text/plain', payload: 'eA==', signatures: [] },
    });
    expect(junk.status).to.equal(400);
    expect(junk.body.code).to.equal('invalid_signature');
  });

  it('stores an admin’s work-order signature and relays it with the order of that content and type', async () => {
    const { agent, client } = await createAgent(api.admin);
    const job = 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\n';
    const issuedAt = new Date().toISOString();
    const signature = signWorkOrder(
      job,
      { generator: 'ops', workType: 'custom', nonce: 'n-0123456789', issuedAt, expires: issuedAt },
      key.privateKey,
    );
    expect((await api.admin.post('/work-orders/signatures', { signature })).status).to.equal(201);
    const order = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: job, target_agent_ids: [agent.id] });
    const build = await api.admin.post('/work-orders', { work_type: 'build', yaml_content: job, target_agent_ids: [agent.id] });
    const relayed = await client.get(`/agents/${agent.id}/signatures`, { query: { work_order_ids: `${order.body.id},${build.body.id}` } });
    expect(relayed.body).to.deep.equal({ deployment_objects: [], work_orders: [{ work_order_id: order.body.id, signature }] });
    const gen = await createGenerator(api.admin);
    expect((await gen.client.post('/work-orders/signatures', { signature })).status).to.equal(403);
  });

  it('publishes trust metadata for agents to read: every root version, the newest revocation list and timestamp', async () => {
    const holders = [generateSigningKey(), generateSigningKey()];
    const ts = generateSigningKey();
    const root = (version: number) =>
      signDocument(
        buildRoot({ version, rootKeys: holders.map((h) => h.privateKey), threshold: 2, timestampKeys: [ts.privateKey], generators: [] }),
        holders.map((h) => h.privateKey),
      );
    for (const envelope of [root(2), root(1)]) expect((await api.admin.put('/trust-metadata', { envelope })).status).to.equal(200);
    const revocations = [1, 2].map((v) => signDocument(buildRevocations(v, { keys: [key.privateKey] }), [holders[0]!.privateKey]));
    for (const envelope of revocations) await api.admin.put('/trust-metadata', { envelope });
    const stamp = signDocument(buildTimestamp({ version: 3, root: 2, revocations: 2, validForMs: 60_000 }), [ts.privateKey]);
    const filed = await api.admin.put('/trust-metadata', { envelope: stamp });
    expect(filed.body).to.deep.equal({ kind: 'timestamp', version: 3 });

    const { agent, client } = await createAgent(api.admin);
    const got = await client.get('/trust-metadata');
    expect(got.status, `${agent.id} ${got.text}`).to.equal(200);
    expect(got.body).to.deep.equal({ roots: [root(1), root(2)], revocations: revocations[1], timestamp: stamp });
    // Kept a moment per api process, but a document published meanwhile is relayed at once.
    const next = signDocument(buildTimestamp({ version: 4, root: 2, revocations: 2, validForMs: 60_000 }), [ts.privateKey]);
    expect((await api.admin.put('/trust-metadata', { envelope: next })).status).to.equal(200);
    expect((await client.get('/trust-metadata')).body).to.deep.include({ timestamp: next });

    expect((await client.put('/trust-metadata', { envelope: stamp })).status, 'admins only').to.equal(403);
    const unsigned = await api.admin.put('/trust-metadata', { envelope: { ...stamp, signatures: [] } });
    expect(unsigned.body.code).to.equal('invalid_trust_metadata');
  });
});

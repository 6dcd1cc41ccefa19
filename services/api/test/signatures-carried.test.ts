import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { buildRoot, generateSigningKey, signDocument, signIntent } from '@brokkr/trust';
import { ApiClient, createAgent, createGenerator, createStack, startTestApi, type ApiProcess, type TestApi } from './support/index.ts';
import { WsAgent } from './support/ws-agent.ts';

interface Served {
  status: number;
  etag: string;
  objects: Record<string, unknown>[];
}

/**
 * Signatures carried with what an agent is served (docs/signatures.md): an agent that checks them
 * asks (`signatures=true`, the channel feature `target-state-signatures`) and gets each served
 * object with the newest signature stored for its content, so a change costs it no request for the
 * signature; every other agent gets exactly today's answer. Two api processes share PostgreSQL and
 * NATS: writes go to one, the agents read from the other.
 */
describe('api: signatures carried with the target state and its patch frames', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let replica: ApiProcess;
  let gen: { id: string; client: ApiClient };
  const key = generateSigningKey();
  const sockets: WsAgent[] = [];
  const checking = { 'brokkr-agent-features': 'target-state-patch,target-state-signatures' };
  const patchesOnly = { 'brokkr-agent-features': 'target-state-patch' };

  const yamlOf = (version: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "${version}"\n`;
  const sign = (stackId: string, yaml: string, version: number) =>
    signIntent(yaml, { stack: stackId, generator: 'ci', version, kind: 'raw', issuedAt: new Date().toISOString() }, key.privateKey);

  async function agent(): Promise<{ id: string; onApi: ApiClient; onReplica: ApiClient }> {
    const { agent, client } = await createAgent(api.admin, { generator_ids: [gen.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    return { id: agent.id, onApi: client, onReplica: new ApiClient(replica.url, client.pak) };
  }

  async function target(agentId: string, stackId: string): Promise<void> {
    expect((await api.admin.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stackId })).status).to.equal(201);
  }

  async function storeSignature(stackId: string, signature: unknown): Promise<void> {
    const res = await gen.client.post(`/stacks/${stackId}/signatures`, { signature });
    expect(res.status, res.text).to.equal(201);
  }

  /** `brokkr apply --sign`: the signature first (unless `signature` is null), then the content. */
  async function publish(stackId: string, version: string, signature: unknown): Promise<string> {
    if (signature !== null) await storeSignature(stackId, signature);
    const res = await gen.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yamlOf(version) });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  async function served(client: ApiClient, agentId: string, opts: { signatures?: boolean; etag?: string; wait?: number } = {}) {
    const query: Record<string, string> = { mode: 'full' };
    if (opts.signatures) query.signatures = 'true';
    if (opts.wait) query.wait = String(opts.wait);
    const res = await client.get(`/agents/${agentId}/target-state`, {
      query,
      headers: opts.etag ? { 'if-none-match': opts.etag } : {},
    });
    expect(res.status, res.text).to.be.oneOf([200, 304]);
    const objects = res.status === 200 ? (res.body as Record<string, unknown>[]) : [];
    return { status: res.status, etag: res.headers.get('etag')!, objects } satisfies Served;
  }

  async function socket(url: string, pak: string, headers: Record<string, string>): Promise<WsAgent> {
    const s = await WsAgent.connect(url, pak, '/internal/ws/agent', headers);
    sockets.push(s);
    return s;
  }

  before(async () => {
    api = await startTestApi(infra);
    replica = await api.spawnReplica();
    const created = await createGenerator(api.admin);
    gen = { id: created.generator.id, client: created.client };
  });
  afterEach(() => sockets.splice(0).forEach((s) => s.close()));
  after(() => api?.stop());

  it('an agent that asks gets each object it is served with its signature; one that does not gets today’s answer', async () => {
    const a = await agent();
    const [signedStack, unsignedStack, notServed] = [
      await createStack(gen.client, { generator_id: gen.id }),
      await createStack(gen.client, { generator_id: gen.id }),
      await createStack(gen.client, { generator_id: gen.id }),
    ];
    await target(a.id, signedStack.id);
    await target(a.id, unsignedStack.id);
    const signature = sign(signedStack.id, yamlOf('1'), 1);
    const signedId = await publish(signedStack.id, '1', signature);
    const unsignedId = await publish(unsignedStack.id, '1', null);
    await publish(notServed.id, '1', sign(notServed.id, yamlOf('1'), 1));

    const asked = await served(a.onReplica, a.id, { signatures: true });
    const byId = new Map(asked.objects.map((o) => [o.id as string, o]));
    expect([...byId.keys()].sort()).to.deep.equal([signedId, unsignedId].sort());
    expect(byId.get(signedId)!.signature).to.deep.equal(signature);
    expect(byId.get(unsignedId)).to.not.have.property('signature');

    const plain = await served(a.onReplica, a.id);
    expect(plain.objects.map((o) => o.id).sort()).to.deep.equal([signedId, unsignedId].sort());
    for (const o of plain.objects) expect(o).to.not.have.property('signature');
    expect(plain.etag, 'another representation, another ETag').to.not.equal(asked.etag);
    expect((await served(a.onReplica, a.id, { signatures: true, etag: asked.etag })).status).to.equal(304);
    expect((await served(a.onReplica, a.id, { etag: plain.etag })).status).to.equal(304);
  });

  it('a signature stored for content already served wakes the asking agent’s held request on the other replica, with the new signature', async () => {
    const [a, plainAgent] = [await agent(), await agent()];
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(a.id, stack.id);
    await target(plainAgent.id, stack.id);
    const id = await publish(stack.id, '1', sign(stack.id, yamlOf('1'), 1));
    const held = await served(a.onReplica, a.id, { signatures: true });
    const plain = await served(plainAgent.onReplica, plainAgent.id);

    const waiting = served(a.onReplica, a.id, { signatures: true, etag: held.etag, wait: 60 });
    // Usually held by then; if not, its first read already differs. Either way it must answer with the new signature.
    await new Promise((r) => setTimeout(r, 500));
    const resigned = sign(stack.id, yamlOf('1'), 2);
    await storeSignature(stack.id, resigned);
    const woken = await waiting;
    expect(woken.status).to.equal(200);
    expect(woken.objects.map((o) => [o.id, o.signature])).to.deep.equal([[id, resigned]]);
    expect(woken.etag).to.not.equal(held.etag);
    expect((await served(plainAgent.onReplica, plainAgent.id, { etag: plain.etag })).status, 'nothing changed for it').to.equal(304);
  });

  it('patch frames carry the new object’s signature to a socket that asked, chained on its signed ETags, and not to others', async () => {
    const [a, p] = [await agent(), await agent()];
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(a.id, stack.id);
    await target(p.id, stack.id);
    await publish(stack.id, '1', sign(stack.id, yamlOf('1'), 1));
    const sa = await socket(replica.url, a.onApi.pak!, checking);
    const sp = await socket(replica.url, p.onApi.pak!, patchesOnly);
    const heldA = await served(a.onReplica, a.id, { signatures: true });
    const heldP = await served(p.onReplica, p.id);
    const signature = sign(stack.id, yamlOf('2'), 2);
    const id = await publish(stack.id, '2', signature);

    const frameA = await sa.waitFor((f) => f.type === 'target_state_patch', 'a patch for the checking agent');
    const bodyA = frameA.body as { base_etag: string; etag: string; objects: Record<string, unknown>[] };
    expect(bodyA.base_etag).to.equal(heldA.etag);
    expect(bodyA.objects.map((o) => [o.id, o.signature])).to.deep.equal([[id, signature]]);
    expect(bodyA.etag, 'the ETag a signed fetch answers with now').to.equal((await served(a.onApi, a.id, { signatures: true })).etag);

    const frameP = await sp.waitFor((f) => f.type === 'target_state_patch', 'a patch for the other agent');
    const bodyP = frameP.body as { base_etag: string; objects: Record<string, unknown>[] };
    expect(bodyP.base_etag).to.equal(heldP.etag);
    expect(bodyP.objects.map((o) => o.id)).to.deep.equal([id]);
    expect(bodyP.objects[0]).to.not.have.property('signature');
  });

  it('PUT /trust-metadata tells the sockets that check signatures on every replica, which then read the new document there', async () => {
    const [a, p] = [await agent(), await agent()];
    const stack = await createStack(gen.client, { generator_id: gen.id });
    await target(p.id, stack.id);
    const sa = await socket(replica.url, a.onApi.pak!, checking);
    const sp = await socket(replica.url, p.onApi.pak!, patchesOnly);
    const holder = generateSigningKey();
    const root = (version: number) =>
      signDocument(buildRoot({ version, rootKeys: [holder.privateKey], threshold: 1, generators: [] }), [holder.privateKey]);
    expect((await api.admin.put('/trust-metadata', { envelope: root(1) })).status).to.equal(200);
    await sa.waitFor((f) => f.type === 'trust_metadata_changed', 'the first notice');
    const before = (await a.onReplica.get('/trust-metadata')).body as { roots: unknown[] };

    const from = sa.frames.length;
    expect((await api.admin.put('/trust-metadata', { envelope: root(2) })).status).to.equal(200);
    await sa.waitFor((f) => f.type === 'trust_metadata_changed', 'the second notice', 15_000, from);
    const after = (await a.onReplica.get('/trust-metadata')).body as { roots: unknown[] };
    expect(after.roots.length, 'the replica relays the new root at once').to.equal(before.roots.length + 1);

    // The other socket hears the next change of its stack, and nothing about trust metadata before it.
    await publish(stack.id, '1', null);
    await sp.waitFor((f) => f.type === 'target_state_patch' || f.type === 'stack_changed', 'a hint of the stack');
    expect(sp.frames.map((f) => f.type)).to.not.include('trust_metadata_changed');
  });
});

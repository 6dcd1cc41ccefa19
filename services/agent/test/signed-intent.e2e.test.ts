import { execFile } from 'node:child_process';
import { randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { AgentEvent, DeploymentObject } from '@brokkr/contracts';
import { LAYERS_ENGINE_VERSION, signedLayers, type SignedLayer } from '@brokkr/overrides';
import { locateRenderer } from '@brokkr/render';
import {
  eventually,
  packChart,
  spawnRenderer,
  startChartRepository,
  startKubeCluster,
  useTestInfra,
  type ChartRepository,
  type KubeCluster,
  type PackagedChart,
  type TestRenderer,
} from '@brokkr/testkit';
import {
  buildRevocations,
  buildRoot,
  buildTimestamp,
  countersign,
  generateSigningKey,
  helmReleaseName,
  intentStatement,
  renderInputDigests,
  renderInputsContent,
  sha256Hex,
  signDocument,
  signIntent,
  signWorkOrder,
  type IntentPredicate,
  type RenderInputValues,
  type Root,
  type TemplateInputValues,
} from '@brokkr/trust';
import { startKeylessMock, type KeylessMock } from '@brokkr/trust/testing';
import { TEMPLATE_ENGINE_VERSION } from '@brokkr/templates';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { createStack, registerAgent, startBroker, target, type Broker, type RegisteredAgent } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { RecordingProxy } from './support/recording-proxy.ts';

/**
 * Signed intent end to end (docs/signatures.md): the real api, three agents (their real main, each
 * with a trust policy requiring signatures, in its own namespaces) and a cluster where pods run. The
 * hub is the attacker here: its database is written to directly, it targets agents the generator
 * did not sign for, it serves old versions, it withholds metadata. Every refusal must leave every
 * object the agents manage as it was (same resourceVersion).
 */
describe('signed intent: agents apply only what a generator signed (end to end)', function () {
  this.timeout(300_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let sql: pg.Pool;
  let mock: KeylessMock;
  let dir: string;
  /** The hub's renderer, the agents' brokkr-render (the same binary) and a chart repository serving examples/charts/hello. */
  let renderer: TestRenderer;
  let rendererBinary: string;
  let rendererVersion: string;
  let charts: ChartRepository;
  let hello: PackagedChart;
  const agents: { reg: RegisteredAgent; ns: string; proc: RunningAgentProcess }[] = [];
  /** The trust policy every agent is installed with. */
  let policy: Record<string, unknown>;

  const rootKeys = [generateSigningKey(), generateSigningKey(), generateSigningKey()];
  const [k1, k2, k3] = rootKeys.map((k) => k.privateKey) as [KeyObject, KeyObject, KeyObject];
  const timestampKey = generateSigningKey();
  const ci = generateSigningKey();
  const ciNext = generateSigningKey('ecdsa-p256');
  const ciRotated = generateSigningKey();
  const issuer = 'https://token.actions.githubusercontent.com';
  const subject = 'https://github.com/acme/app/.github/workflows/deploy.yml@refs/heads/main';
  /** The key 'ci' signs with now: the first one until it is revoked, then the next, then the one a root rotation brings. */
  let signer = ci.privateKey;
  let rootVersion = 1;
  let revocationsVersion = 0;
  let timestampVersion = 0;

  const root = (version: number, ciKeys: KeyObject[]): Root =>
    buildRoot({
      version,
      rootKeys: [k1, k2, k3],
      threshold: 2,
      timestampKeys: [timestampKey.privateKey],
      generators: [
        { name: 'ci', keys: ciKeys, stacks: ['*'], workOrders: true },
        { name: 'ci-keyless', keyless: [{ issuer, subject: 'https://github\\.com/acme/.*' }], stacks: ['*'] },
      ],
    });

  const predicate = (stack: string, version: number, p: Partial<IntentPredicate> = {}): IntentPredicate => ({
    stack,
    generator: 'ci',
    version,
    kind: 'raw',
    issuedAt: new Date().toISOString(),
    ...p,
  });

  const cm = (name: string, data: Record<string, string>) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
      .map(([k, v]) => `  ${k}: "${v}"`)
      .join('\n')}\n`;
  const app = (name: string, version: string) =>
    `${cm(`${name}-config`, { version })}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: ${name}}\n  template:\n    metadata:\n      labels: {app: ${name}}\n    spec:\n      containers:\n        - name: main\n          image: nginx:1.27\n`;

  async function post(stack: string, yaml: string, marker = false): Promise<DeploymentObject> {
    const res = await broker.admin.post<DeploymentObject>(`/stacks/${stack}/deployment-objects`, {
      yaml_content: yaml,
      is_deletion_marker: marker,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  async function storeSignature(stack: string, signature: unknown): Promise<void> {
    const res = await broker.admin.post(`/stacks/${stack}/signatures`, { signature });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  }

  /** What `brokkr apply --sign` does: the signature first, then the content. */
  async function publish(stack: string, yaml: string, version: number, p: Partial<IntentPredicate> & { key?: KeyObject } = {}) {
    const { key = signer, ...rest } = p;
    await storeSignature(stack, signIntent(yaml, predicate(stack, version, rest), key));
    return post(stack, yaml, p.kind === 'deletion');
  }

  async function putMetadata(envelope: unknown): Promise<void> {
    const res = await broker.admin.put('/trust-metadata', { envelope });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  async function stamp(spec: { revocations?: number } = {}): Promise<void> {
    timestampVersion++;
    const doc = buildTimestamp({
      version: timestampVersion,
      root: rootVersion,
      revocations: spec.revocations ?? revocationsVersion,
      validForMs: 3_600_000,
    });
    await putMetadata(signDocument(doc, [timestampKey.privateKey]));
  }

  const eventFor = (agentId: string, objectId: string, status: 'SUCCESS' | 'FAILURE') =>
    eventually(
      async () =>
        ((await broker.admin.get<AgentEvent[]>(`/agents/${agentId}/events`)).body ?? []).find(
          (e) => e.deployment_object_id === objectId && e.status === status,
        ),
      { timeoutMs: 90_000, what: `a ${status} event of agent ${agentId} for ${objectId}` },
    );

  /** resourceVersion of every object an agent applied (owner label), by kind/namespace/name. */
  async function managedVersions(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const p of ['/api/v1/configmaps', '/apis/apps/v1/deployments', '/api/v1/namespaces']) {
      const list = await kubectl.get<{
        items: { kind?: string; metadata: { namespace?: string; name: string; resourceVersion: string } }[];
      }>(`${p}?labelSelector=brokkr.io/owner-id`);
      for (const o of list?.items ?? []) out[`${p}/${o.metadata.namespace ?? ''}/${o.metadata.name}`] = o.metadata.resourceVersion;
    }
    return out;
  }

  const configVersion = async (ns: string, name: string) =>
    (await kubectl.get<{ data: { version: string } }>(`/api/v1/namespaces/${ns}/configmaps/${name}-config`))?.data.version;

  /** A state change the hub's cached answers do not know of (a row written behind its back): an agent label change drops them. */
  async function wake(agentId: string): Promise<void> {
    const label = `wake-${randomBytes(3).toString('hex')}`;
    expect((await broker.admin.post(`/agents/${agentId}/labels`, { agent_id: agentId, label })).status).to.equal(201);
  }

  async function startAgent(name: string, policy: Record<string, unknown>, via: { brokerUrl?: string; env?: Record<string, string> } = {}) {
    const reg = await registerAgent(broker.admin, { name });
    const ns = `team-${name}`;
    const agentNs = `agent-${name}`;
    for (const n of [ns, agentNs]) await kubectl.create('/api/v1/namespaces', { metadata: { name: n } });
    const file = path.join(dir, `${name}.policy.json`);
    await writeFile(file, JSON.stringify(policy));
    const proc = await spawnAgent(via.brokerUrl ?? broker.url, reg, kube.kubeconfigPath, {
      env: {
        BROKKR__AGENT__TRUST_POLICY_FILE: file,
        BROKKR__AGENT__NAMESPACE: agentNs,
        BROKKR__AGENT__WATCH_NAMESPACE: ns,
        BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '3',
        BROKKR__AGENT__WORK_ORDER_CONCURRENCY: '1',
        BROKKR__AGENT__RENDERER_BINARY: rendererBinary,
        ...via.env,
      },
    });
    const agent = { reg, ns, proc };
    agents.push(agent);
    return agent;
  }

  before(async () => {
    hello = await packChart(path.resolve(import.meta.dirname, '../../../examples/charts/hello'));
    [broker, kube, mock, rendererBinary, charts] = await Promise.all([
      startBroker(infra, { env: { BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' } }),
      startKubeCluster(),
      startKeylessMock(),
      locateRenderer(),
      startChartRepository([hello]),
    ]);
    rendererVersion = (await promisify(execFile)(rendererBinary, ['--version'])).stdout.trim();
    renderer = await spawnRenderer({ databaseUrl: infra.db.url, binary: rendererBinary });
    kubectl = new Kubectl(kube);
    sql = new pg.Pool({ connectionString: infra.db.url, max: 2 });
    dir = await mkdtemp(path.join(tmpdir(), 'brokkr-trust-'));
    await stamp();
    policy = {
      requireSignatures: true,
      root: signDocument(root(1, [ci.privateKey, ciNext.privateKey]), [k1, k2]),
      identity: { labels: ['edge'] },
      maxMetadataAge: '1h',
      sigstore: { trustedRoot: mock.trustedRoot },
    };
    for (const name of ['a', 'b', 'c']) await startAgent(name, policy);
  });

  after(async () => {
    await Promise.allSettled(agents.map((a) => a.proc.stop()));
    mock?.close();
    await sql?.end();
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop(), renderer?.stop(), charts?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed')
      for (const a of agents) console.log(`--- agent ${a.reg.name}\n${a.proc.output().slice(-5000)}`);
  });

  describe('with a signed stack running on two agents', () => {
    let stack: string;
    let v1: DeploymentObject;
    const [a, b] = [0, 1];

    before(async () => {
      stack = await createStack(broker.admin);
      for (const i of [a, b]) await target(broker.admin, agents[i]!.reg.id, stack);
      v1 = await publish(stack, app('web', '1'), 1, { targeting: { labels: ['edge'] } });
      for (const i of [a, b]) await eventFor(agents[i]!.reg.id, v1.id, 'SUCCESS');
      for (const i of [a, b])
        await eventually(
          async () => ((await kubectl.get(`/apis/apps/v1/namespaces/${agents[i]!.ns}/deployments/web`))?.status?.readyReplicas ?? 0) === 1,
          {
            timeoutMs: 90_000,
            what: `the signed Deployment's pod Ready on agent ${i}`,
          },
        );
    });

    it('refuses an unsigned object with signature_invalid on every agent, and changes nothing in the cluster', async () => {
      const before = await managedVersions();
      const unsigned = await post(stack, app('web', '2'));
      for (const i of [a, b]) {
        const refused = await eventFor(agents[i]!.reg.id, unsigned.id, 'FAILURE');
        expect(refused.message).to.equal('refused: signature_invalid: the hub relayed no signature for it');
      }
      expect(await managedVersions()).to.deep.equal(before);
      expect(await configVersion(agents[a]!.ns, 'web')).to.equal('1');
    });

    it('one byte changed in the hub’s database: every agent refuses with signature_invalid, and no managed object’s resourceVersion changes', async () => {
      const before = await managedVersions();
      const tampered = app('web', '1').replace('nginx:1.27', 'nginx:1.28');
      expect(Buffer.from(tampered).length).to.equal(Buffer.from(app('web', '1')).length);
      // An attacker with write access to the database: the signed object's row again, one byte changed,
      // its checksum left as signed (so the hub relays the generator's real signature with it).
      const { rows } = await sql.query<{ id: string }>(
        `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, is_deletion_marker) VALUES ($1, $2, $3, false) RETURNING id`,
        [stack, tampered, sha256Hex(app('web', '1'))],
      );
      for (const i of [a, b]) await wake(agents[i]!.reg.id);
      for (const i of [a, b]) {
        const refused = await eventFor(agents[i]!.reg.id, rows[0]!.id, 'FAILURE');
        expect(refused.message).to.match(/^refused: signature_invalid: its content \(sha256 [0-9a-f]{12}…\) is not what was signed$/);
      }
      // Resyncs (every 3 s) ran meanwhile; they re-apply the signed version, which changes nothing.
      await new Promise((r) => setTimeout(r, 4000));
      expect(await managedVersions()).to.deep.equal(before);
      const image = (await kubectl.get(`/apis/apps/v1/namespaces/${agents[a]!.ns}/deployments/web`)).spec.template.spec.containers[0].image;
      expect(image).to.equal('nginx:1.27');
    });

    it('a byte changed in the stored signature: refused with signature_invalid too', async () => {
      const yaml = app('web', '3');
      const signature = signIntent(yaml, predicate(stack, 3), signer) as unknown as { dsseEnvelope: { signatures: { sig: string }[] } };
      const sig = Buffer.from(signature.dsseEnvelope.signatures[0]!.sig, 'base64');
      sig[10]! ^= 0x01;
      signature.dsseEnvelope.signatures[0]!.sig = sig.toString('base64');
      await storeSignature(stack, signature);
      const d = await post(stack, yaml);
      for (const i of [a, b])
        expect((await eventFor(agents[i]!.reg.id, d.id, 'FAILURE')).message).to.equal(
          'refused: signature_invalid: no key of generator "ci" made this signature',
        );
      expect(await configVersion(agents[b]!.ns, 'web')).to.equal('1');
    });
  });

  it('checks a new signed version with the signature that came with it: no request for the signature or the trust metadata, which it reads when the hub announces a change', async () => {
    // Through a proxy that records its requests; its periodic metadata refresh (the polling interval) is out of the way.
    const proxy = await RecordingProxy.start(broker.url);
    const d = await startAgent('d', policy, { brokerUrl: proxy.url, env: { BROKKR__AGENT__POLLING_INTERVAL: '600' } });
    try {
      const stack = await createStack(broker.admin);
      await target(broker.admin, d.reg.id, stack);
      const v1 = await publish(stack, cm('carried', { version: '1' }), 1);
      await eventFor(d.reg.id, v1.id, 'SUCCESS');
      const upgrade = proxy.requests.find((r) => r.url.startsWith('/internal/ws/agent'));
      expect(upgrade?.headers['brokkr-agent-features']).to.include('target-state-signatures');
      const mark = proxy.requests.length;
      const v2 = await publish(stack, cm('carried', { version: '2' }), 2);
      await eventFor(d.reg.id, v2.id, 'SUCCESS');
      expect((await kubectl.get(`/api/v1/namespaces/${d.ns}/configmaps/carried`)).data).to.deep.equal({ version: '2' });
      const asked = proxy.requests.slice(mark).map((r) => `${r.method} ${r.url}`);
      expect(asked.filter((line) => /\/signatures|\/trust-metadata/.test(line))).to.deep.equal([]);
      // A published timestamp: the hub tells the agent (trust_metadata_changed), long before its refresh interval.
      const beforeStamp = proxy.requests.length;
      await stamp();
      await eventually(async () => proxy.requests.slice(beforeStamp).some((r) => r.url === '/api/v1/trust-metadata'), {
        timeoutMs: 30_000,
        what: 'the agent reading the trust metadata the hub announced',
      });
    } finally {
      await d.proc.stop();
      agents.splice(agents.indexOf(d), 1);
      await proxy.close();
    }
  });

  it('an agent the hub adds outside the signed targeting refuses with target_not_authorized; the agent signed for applies', async () => {
    const [a, c] = [agents[0]!, agents[2]!];
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    await target(broker.admin, c.reg.id, stack);
    const d = await publish(stack, cm('only-a', { version: '1' }), 1, { targeting: { agents: [a.reg.name] } });
    await eventFor(a.reg.id, d.id, 'SUCCESS');
    const refused = await eventFor(c.reg.id, d.id, 'FAILURE');
    expect(refused.message).to.equal(
      `refused: target_not_authorized: agent test-cluster/${c.reg.name} is not among the agents it was signed for`,
    );
    expect(await kubectl.get(`/api/v1/namespaces/${c.ns}/configmaps/only-a`)).to.equal(undefined);
  });

  it('an older version served after a newer one is refused with rollback_rejected; the rollback the newer version allows succeeds', async () => {
    const a = agents[0]!;
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    const v3 = await publish(stack, cm('db', { version: '3' }), 3);
    await eventFor(a.reg.id, v3.id, 'SUCCESS');
    const v5 = await publish(stack, cm('db', { version: '5' }), 5, { rollback: { allowTo: [4] } });
    await eventFor(a.reg.id, v5.id, 'SUCCESS');
    const before = await managedVersions();
    // The hub serves v3 again (its content, with the generator's real v3 signature).
    const replay = await post(stack, cm('db', { version: '3' }));
    const refused = await eventFor(a.reg.id, replay.id, 'FAILURE');
    expect(refused.message).to.equal(
      'refused: rollback_rejected: version 3 is older than version 5 taken before, which allows a rollback to 4',
    );
    expect(await managedVersions()).to.deep.equal(before);
    const v4 = await publish(stack, cm('db', { version: '4' }), 4);
    await eventFor(a.reg.id, v4.id, 'SUCCESS');
    expect((await kubectl.get(`/api/v1/namespaces/${a.ns}/configmaps/db`)).data).to.deep.equal({ version: '4' });
    const state = await kubectl.get(`/api/v1/namespaces/agent-${a.reg.name}/configmaps/brokkr-agent-trust-state`);
    expect(JSON.parse(state.data['trust-state.json']).stacks[stack]).to.include({ version: 4, highest: 5 });
  });

  it('the hub dropping a stack deletes nothing; a signed deletion marker deletes it', async () => {
    const a = agents[0]!;
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    const d = await publish(stack, cm('kept', { version: '1' }), 1);
    await eventFor(a.reg.id, d.id, 'SUCCESS');
    expect((await broker.admin.delete(`/agents/${a.reg.id}/targets/${stack}`)).status).to.equal(204);
    const unsignedMarker = await post(stack, '', true).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 4000));
    expect(
      await kubectl.get(`/api/v1/namespaces/${a.ns}/configmaps/kept`),
      'a stack the hub stopped listing keeps its objects',
    ).to.not.equal(undefined);
    expect(unsignedMarker).to.not.equal(undefined);
    await target(broker.admin, a.reg.id, stack);
    const marker = await publish(stack, '', 2, { kind: 'deletion' });
    await eventFor(a.reg.id, marker.id, 'SUCCESS');
    await eventually(async () => (await kubectl.get(`/api/v1/namespaces/${a.ns}/configmaps/kept`)) === undefined, {
      timeoutMs: 60_000,
      what: 'the stack deleted',
    });
  });

  it('a revoked key’s objects are refused within one poll, and the same content re-signed by another key is accepted', async () => {
    const a = agents[0]!;
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    const v1 = await publish(stack, cm('rev', { version: '1' }), 1);
    await eventFor(a.reg.id, v1.id, 'SUCCESS');
    const before = await managedVersions();
    revocationsVersion++;
    await putMetadata(signDocument(buildRevocations(revocationsVersion, { keys: [ci.privateKey] }), [k1, k3]));
    await stamp();
    // The next metadata poll takes the list, and what the key signed is refused from then on,
    // the object already applied too: it stays as it is, and nothing of the key is applied again.
    const revoked = /^refused: key_revoked: key [0-9a-f]{12}… of generator "ci" is revoked \(revocation list v1\)$/;
    expect((await eventFor(a.reg.id, v1.id, 'FAILURE')).message).to.match(revoked);
    const yaml = cm('rev', { version: '2' });
    const v2 = await publish(stack, yaml, 2);
    expect((await eventFor(a.reg.id, v2.id, 'FAILURE')).message).to.match(revoked);
    expect(await managedVersions()).to.deep.equal(before);
    await storeSignature(stack, signIntent(yaml, predicate(stack, 2), ciNext.privateKey));
    signer = ciNext.privateKey;
    await eventFor(a.reg.id, v2.id, 'SUCCESS');
    expect((await kubectl.get(`/api/v1/namespaces/${a.ns}/configmaps/rev`)).data).to.deep.equal({ version: '2' });
  });

  it('a root rotation signed by 2 of the 3 root keys is taken, one signed by 1 of 3 is not', async () => {
    const a = agents[0]!;
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    const rotated = signDocument(root(rootVersion + 1, [ciRotated.privateKey]), [k2]);
    await putMetadata(rotated);
    const d = await publish(stack, cm('rotated', { version: '1' }), 1, { key: ciRotated.privateKey });
    expect((await eventFor(a.reg.id, d.id, 'FAILURE')).message).to.equal(
      'refused: signature_invalid: no key of generator "ci" made this signature',
    );
    await putMetadata(countersign(rotated, [k3]));
    rootVersion++;
    signer = ciRotated.privateKey;
    await stamp();
    await eventFor(a.reg.id, d.id, 'SUCCESS');
    const state = await kubectl.get(`/api/v1/namespaces/agent-${a.reg.name}/configmaps/brokkr-agent-trust-state`);
    expect(JSON.parse(Buffer.from(JSON.parse(state.data['trust-state.json']).root.payload, 'base64').toString()).version).to.equal(
      rootVersion,
    );
  });

  it('stale metadata (a timestamp naming a revocation list the hub withholds) is detected: no new version is taken until fresh metadata comes', async () => {
    const a = agents[0]!;
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    const v1 = await publish(stack, cm('fresh', { version: '1' }), 1);
    await eventFor(a.reg.id, v1.id, 'SUCCESS');
    await stamp({ revocations: revocationsVersion + 5 });
    await eventually(
      async () =>
        (await fetch(`${a.proc.healthUrl}/metrics`).then((r) => r.text())).match(/^brokkr_agent_trust_metadata_stale(\{[^}]*\})? 1$/m) !==
        null,
      {
        timeoutMs: 30_000,
        what: 'the agent saying its metadata is stale',
      },
    );
    const v2 = await publish(stack, cm('fresh', { version: '2' }), 2);
    expect((await eventFor(a.reg.id, v2.id, 'FAILURE')).message).to.match(
      /^refused: trust_metadata_stale: version 2 is not taken while the trust metadata is stale: timestamp v\d+ names revocation list v\d+, the hub relayed v\d+$/,
    );
    expect(a.proc.output()).to.include('trust_metadata_stale: no new version is taken');
    await stamp();
    await eventFor(a.reg.id, v2.id, 'SUCCESS');
  });

  it('takes a keyless signature (Sigstore bundle from sigstore-js, Fulcio and Rekor mocked offline) for the identity the root names', async () => {
    const a = agents[0]!;
    const stack = await createStack(broker.admin);
    await target(broker.admin, a.reg.id, stack);
    const yaml = cm('keyless', { version: '1' });
    const statement = intentStatement(sha256Hex(yaml), predicate(stack, 1, { generator: 'ci-keyless' }));
    await storeSignature(stack, await mock.sign(statement, { issuer, subject }));
    const d = await post(stack, yaml);
    await eventFor(a.reg.id, d.id, 'SUCCESS');
    const other = cm('keyless', { version: '2' });
    await storeSignature(
      stack,
      await mock.sign(intentStatement(sha256Hex(other), predicate(stack, 2, { generator: 'ci-keyless' })), {
        issuer,
        subject: 'https://github.com/evil/app/x.yml@refs/heads/main',
      }),
    );
    const refused = await post(stack, other);
    expect((await eventFor(a.reg.id, refused.id, 'FAILURE')).message).to.match(
      /^refused: signature_invalid: the certificate .* matches no keyless identity of "ci-keyless"$/,
    );
  });

  it('runs a signed work order once; refuses an unsigned one', async () => {
    const b = agents[1]!;
    const job = cm(`order-${randomBytes(3).toString('hex')}`, { version: '1' });
    const issuedAt = new Date().toISOString();
    const expires = new Date(Date.now() + 600_000).toISOString();
    const signature = signWorkOrder(
      job,
      { generator: 'ci', workType: 'custom', nonce: randomBytes(8).toString('hex'), issuedAt, expires },
      signer,
    );
    expect((await broker.admin.post('/work-orders/signatures', { signature })).status).to.equal(201);
    const complete = async (yaml: string) => {
      const order = await broker.admin.post('/work-orders', { work_type: 'custom', yaml_content: yaml, target_agent_ids: [b.reg.id] });
      expect(order.status).to.equal(201);
      return eventually(
        async () =>
          (await broker.admin.get(`/work-order-log/${order.body.id}`)).body?.completed_at &&
          (await broker.admin.get(`/work-order-log/${order.body.id}`)).body,
        {
          timeoutMs: 60_000,
          what: 'the work order completed',
        },
      );
    };
    expect(await complete(job)).to.include({ success: true });
    const unsigned = await complete(cm('unsigned-order', { version: '1' }));
    expect(unsigned).to.include({ success: false, result_message: 'refused: signature_invalid: the hub relayed no signature for it' });
    expect(await kubectl.get(`/api/v1/namespaces/${b.ns}/configmaps/unsigned-order`)).to.equal(undefined);
    const again = await complete(job);
    expect(again.result_message).to.match(/^refused: rollback_rejected: signed work order [0-9a-f]+ was run already$/);
  });
  describe('a chart signed by its inputs (the agent renders it itself)', () => {
    /** An agent of its own, managing the namespace the hub renders charts into (their release's, `default`). */
    let d: (typeof agents)[number];
    const name = `signed-chart-${randomBytes(3).toString('hex')}`;
    const release = helmReleaseName(name);
    let stack: string;
    let v1: DeploymentObject;

    const inputs = (greeting: string, layers?: SignedLayer[]): RenderInputValues => ({
      kind: 'helm',
      archive: hello.tgz,
      values: { greeting },
      options: { release: { name: release, namespace: 'default' } },
      renderer: rendererVersion,
      layers,
    });

    /** What `brokkr apply --chart … --sign [--layers]` does: the signature of the inputs, then the chart and values. */
    async function publishChart(greeting: string, version: number, layers?: SignedLayer[]): Promise<DeploymentObject> {
      const signed = inputs(greeting, layers);
      const p = predicate(stack, version, { kind: 'helm', inputs: renderInputDigests(signed), renderer: rendererVersion });
      await storeSignature(stack, signIntent(renderInputsContent(signed), p, signer));
      const res = await broker.admin.post<DeploymentObject>(`/stacks/${stack}/deployment-objects`, {
        source: { helm: { repository: charts.url, chart: hello.name, version: hello.version } },
        values: { greeting },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body;
    }

    const configMap = async () => {
      return kubectl.get<{ data: { greeting: string }; metadata: { resourceVersion: string } }>(
        `/api/v1/namespaces/default/configmaps/${release}-hello`,
      );
    };
    before(async () => {
      await stamp();
      d = await startAgent('renders', policy, { env: { BROKKR__AGENT__WATCH_NAMESPACE: 'default' } });
      stack = await createStack(broker.admin, name);
      await target(broker.admin, d.reg.id, stack);
    });

    it('is applied from the agent’s own render of the signed chart and values', async () => {
      v1 = await publishChart('signed v1', 1);
      await eventFor(d.reg.id, v1.id, 'SUCCESS');
      expect((await configMap())?.data.greeting).to.equal('signed v1');
      // The hub rendered the same inputs with the same engine: nothing to report.
      expect(d.proc.output()).not.to.include('that is not the agent’s own render');
    });

    it('a hub render changed in the database: refused with signature_invalid, nothing changes in the cluster', async () => {
      const before = await configMap();
      const changed = await sql.query(
        `UPDATE renders r SET yaml_content = replace(r.yaml_content, 'signed v1', 'from the hub'),
                              yaml_checksum = encode(sha256(convert_to(replace(r.yaml_content, 'signed v1', 'from the hub'), 'UTF8')), 'hex')
           FROM agent_renders ar WHERE ar.render_key = r.key AND ar.agent_id = $1 AND ar.deployment_object_id = $2`,
        [d.reg.id, v1.id],
      );
      expect(changed.rowCount).to.equal(1);
      await wake(d.reg.id);
      expect((await eventFor(d.reg.id, v1.id, 'FAILURE')).message).to.match(
        /^refused: signature_invalid: the hub served a helm render \(sha256 \w+…\) that is not the agent’s own render/,
      );
      const after = await configMap();
      expect(after?.data.greeting).to.equal('signed v1');
      expect(after?.metadata.resourceVersion).to.equal(before?.metadata.resourceVersion);
    });

    it('one byte changed in the stored chart archive: refused with signature_invalid, nothing changes in the cluster', async () => {
      const before = await configMap();
      // The gzip header's OS byte: the archive still unpacks (the hub renders it as before), its digest is another.
      const changed = await sql.query(`UPDATE source_blobs SET bytes = set_byte(bytes, 9, get_byte(bytes, 9) # 1) WHERE digest = $1`, [
        hello.digest,
      ]);
      expect(changed.rowCount).to.equal(1);
      const v2 = await publishChart('signed v2', 2);
      expect((await eventFor(d.reg.id, v2.id, 'FAILURE')).message).to.match(/^refused: signature_invalid: its source \(sha256 /);
      const after = await configMap();
      expect(after?.data.greeting).to.equal('signed v1');
      expect(after?.metadata.resourceVersion).to.equal(before?.metadata.resourceVersion);
    });

    it('override layers signed with the chart: applied as the agent’s own trust policy selects them; the hub selecting others, or a layer changed in its database, is refused', async () => {
      // The archive byte changed above, changed back: the chart is the signed one again.
      await sql.query(`UPDATE source_blobs SET bytes = set_byte(bytes, 9, get_byte(bytes, 9) # 1) WHERE digest = $1`, [hello.digest]);
      const configMapName = `${release}-hello`;
      const layers = signedLayers([
        {
          name: 'mine',
          priority: 0,
          selector: { labels: ['edge'] },
          values: { greeting: 'layered' },
          patches: [{ target: { kind: 'ConfigMap', name: configMapName }, merge_patch: { data: { patched: 'yes' } } }],
        },
        { name: 'not-mine', priority: 1, selector: { labels: ['elsewhere'] }, values: { greeting: 'not for this agent' } },
      ]);
      // The hub knows the agent by the label its trust policy gives it, so the hub renders what the agent does.
      expect((await broker.admin.post(`/agents/${d.reg.id}/labels`, { agent_id: d.reg.id, label: 'edge' })).status).to.equal(201);
      for (const layer of layers) {
        const res = await broker.admin.post(`/stacks/${stack}/overrides`, layer);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
      }
      const v3 = await publishChart('signed v3', 3, layers);
      await eventFor(d.reg.id, v3.id, 'SUCCESS');
      const applied = await configMap();
      expect(applied?.data).to.include({ greeting: 'layered', patched: 'yes' });

      // The hub now selects `not-mine` for the agent too (by a label only it holds): its render is not the agent's own.
      expect((await broker.admin.post(`/agents/${d.reg.id}/labels`, { agent_id: d.reg.id, label: 'elsewhere' })).status).to.equal(201);
      expect((await eventFor(d.reg.id, v3.id, 'FAILURE')).message).to.match(
        /^refused: signature_invalid: the hub served a helm render \(sha256 \w+…\) that is not the agent’s own render/,
      );
      expect((await configMap())?.metadata.resourceVersion).to.equal(applied?.metadata.resourceVersion);
      expect((await broker.admin.delete(`/agents/${d.reg.id}/labels/elsewhere`)).status).to.equal(204);

      // A layer's values changed in the database: the next version, signed with the layers as they were, is refused.
      await sql.query(`UPDATE stack_overrides SET layer_values = '{"greeting":"from the hub"}' WHERE stack_id = $1 AND name = 'mine'`, [
        stack,
      ]);
      // (The hub relays the newest signature of the same chart and values, so the refusal names the layers.)
      const v4 = await publishChart('signed v4', 4, layers);
      expect((await eventFor(d.reg.id, v4.id, 'FAILURE')).message).to.match(/^refused: signature_invalid: its layers \(sha256 /);
      const after = await configMap();
      expect(after?.data.greeting).to.equal('layered');
      expect(after?.metadata.resourceVersion).to.equal(applied?.metadata.resourceVersion);
    });
  });

  describe('a template signed by its inputs (the agent renders it itself)', () => {
    let e: (typeof agents)[number];
    let stack: string;
    let templateId: string;
    let v1: DeploymentObject;
    const content = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ name }}\ndata:\n  greeting: "{{ greeting | upper }}"\n';
    const schema = JSON.stringify({
      type: 'object',
      properties: { name: { type: 'string' }, greeting: { type: 'string' } },
      required: ['name', 'greeting'],
    });

    const inputs = (greeting: string): TemplateInputValues => ({
      kind: 'template',
      template: content,
      parametersSchema: schema,
      parameters: { name: 'greeter', greeting },
      renderer: TEMPLATE_ENGINE_VERSION,
    });

    /** What `brokkr instantiate … --sign` does: the signature of the template's inputs, then the instantiation. */
    async function instantiate(greeting: string, version: number): Promise<DeploymentObject> {
      const signed = inputs(greeting);
      const p = predicate(stack, version, { kind: 'template', inputs: renderInputDigests(signed), renderer: TEMPLATE_ENGINE_VERSION });
      await storeSignature(stack, signIntent(renderInputsContent(signed), p, signer));
      const res = await broker.admin.post<DeploymentObject>(`/stacks/${stack}/deployment-objects/from-template`, {
        template_id: templateId,
        parameters: signed.parameters,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body;
    }

    const configMap = () =>
      kubectl.get<{ data: { greeting: string }; metadata: { resourceVersion: string } }>(`/api/v1/namespaces/${e.ns}/configmaps/greeter`);

    before(async () => {
      await stamp();
      e = await startAgent('templates', policy);
      stack = await createStack(broker.admin, `signed-template-${randomBytes(3).toString('hex')}`);
      await target(broker.admin, e.reg.id, stack);
      const res = await broker.admin.post<{ id: string }>('/templates', {
        name: `greeter-${randomBytes(3).toString('hex')}`,
        template_content: content,
        parameters_schema: schema,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      templateId = res.body.id;
    });

    it('is applied from the agent’s own render of the signed template and parameters', async () => {
      v1 = await instantiate('signed v1', 1);
      await eventFor(e.reg.id, v1.id, 'SUCCESS');
      expect((await configMap())?.data.greeting).to.equal('SIGNED V1');
      // The hub instantiated the same inputs with the same engine: nothing to report.
      expect(e.proc.output()).not.to.include('that is not the agent’s own render');
    });

    it('a parameter changed in the hub’s database: refused with signature_invalid, nothing changes in the cluster', async () => {
      const before = await configMap();
      // The provenance row is rewritten as it is stored: the hub serves the signed render, and relays other parameters.
      await sql.query(`CREATE FUNCTION brokkr_test_tamper() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.template_parameters := replace(NEW.template_parameters, 'signed v2', 'from the hub'); RETURN NEW; END $$`);
      await sql.query(`CREATE TRIGGER brokkr_test_tamper BEFORE INSERT ON rendered_deployment_objects
        FOR EACH ROW EXECUTE FUNCTION brokkr_test_tamper()`);
      const v2 = await instantiate('signed v2', 2).finally(() =>
        sql.query('DROP TRIGGER brokkr_test_tamper ON rendered_deployment_objects; DROP FUNCTION brokkr_test_tamper()'),
      );
      const stored = await sql.query(`SELECT template_parameters FROM rendered_deployment_objects WHERE deployment_object_id = $1`, [
        v2.id,
      ]);
      expect(JSON.parse(stored.rows[0].template_parameters)).to.deep.equal({ name: 'greeter', greeting: 'from the hub' });
      expect((await eventFor(e.reg.id, v2.id, 'FAILURE')).message).to.match(/^refused: signature_invalid: /);
      const after = await configMap();
      expect(after?.data.greeting).to.equal('SIGNED V1');
      expect(after?.metadata.resourceVersion).to.equal(before?.metadata.resourceVersion);
    });

    it('plain YAML under override layers signed with it: patched as the agent’s own trust policy selects them, its references resolved by the agent; signed without the layers, refused', async () => {
      const plain = await createStack(broker.admin, `signed-plain-${randomBytes(3).toString('hex')}`);
      await target(broker.admin, e.reg.id, plain);
      const patch = (data: Record<string, string>) => [{ target: { kind: 'ConfigMap', name: 'layered' }, merge_patch: { data } }];
      const layers = signedLayers([
        {
          name: 'mine',
          priority: 0,
          selector: { labels: ['edge'] },
          patches: patch({ layer: 'applied', by: '{{ agent.name }}', on: '{{ agent.facts.kubernetes_version }}' }),
        },
        { name: 'not-mine', priority: 0, selector: { labels: ['elsewhere'] }, patches: patch({ other: 'not for this agent' }) },
      ]);
      // The hub knows the agent by the label its trust policy gives it, so the hub patches as the agent does.
      expect((await broker.admin.post(`/agents/${e.reg.id}/labels`, { agent_id: e.reg.id, label: 'edge' })).status).to.equal(201);
      for (const layer of layers) expect((await broker.admin.post(`/stacks/${plain}/overrides`, layer)).status).to.equal(201);
      const signed = { kind: 'yaml' as const, content: cm('layered', { version: '1' }), renderer: LAYERS_ENGINE_VERSION, layers };
      const p = predicate(plain, 1, { kind: 'yaml', inputs: renderInputDigests(signed), renderer: LAYERS_ENGINE_VERSION });
      await storeSignature(plain, signIntent(renderInputsContent(signed), p, signer));
      const v1 = await post(plain, signed.content);
      await eventFor(e.reg.id, v1.id, 'SUCCESS');
      const layered = () =>
        kubectl.get<{ data: Record<string, string>; metadata: { resourceVersion: string } }>(
          `/api/v1/namespaces/${e.ns}/configmaps/layered`,
        );
      const applied = await layered();
      // `{{ agent.* }}` resolved by the agent from its own configuration and cluster, as the hub resolved it.
      const { gitVersion } = (await kubectl.get<{ gitVersion: string }>('/version'))!;
      expect(applied?.data).to.deep.equal({ version: '1', layer: 'applied', by: e.reg.name, on: gitVersion });

      // Its content alone signed (kind raw): the layers the hub applies are not, so it is refused.
      const v2 = await publish(plain, cm('layered', { version: '2' }), 2);
      expect((await eventFor(e.reg.id, v2.id, 'FAILURE')).message).to.match(/^refused: signature_invalid: /);
      expect((await layered())?.metadata.resourceVersion).to.equal(applied?.metadata.resourceVersion);
    });
  });
});

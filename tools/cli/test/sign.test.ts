import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import {
  buildRoot,
  checkIntent,
  parseTrustPolicy,
  privateKeyFromPem,
  publicKeyFromPem,
  readDocument,
  revocationsSchema,
  timestampSchema,
  type TrustView,
} from '@brokkr/trust';
import {
  buildCli,
  configMap,
  createActiveAgent,
  createGenerator,
  manifestDir,
  runCli,
  startHub,
  uniqueName,
  type TestHub,
} from './support.ts';

/**
 * `brokkr apply --sign`, `brokkr sign` and `brokkr trust` (built CLI, real hub): what they sign is
 * what the hub stores and relays, and what an agent's checks (the same @brokkr/trust code) accept.
 */
describe('brokkr sign / apply --sign / trust (built CLI against a real hub)', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let keys: string;

  before(async () => {
    await buildCli();
    hub = await startHub(infra);
    keys = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-keys-'));
  });
  after(async () => {
    await hub?.stop();
    if (keys) await fs.rm(keys, { recursive: true, force: true });
  });

  async function keygen(name: string): Promise<string> {
    const made = await runCli(['trust', 'keygen', name, '--dir', keys]);
    expect(made.code, made.stderr).to.equal(0);
    expect((await fs.stat(path.join(keys, `${name}.key`))).mode & 0o777).to.equal(0o600);
    const id = await runCli(['trust', 'key-id', path.join(keys, `${name}.pub`)]);
    expect(id.stdout.trim()).to.equal(made.stdout.trim());
    return made.stdout.trim();
  }

  const view = (generatorKey: string, agentName = 'edge-1'): TrustView => ({
    root: buildRoot({
      version: 1,
      rootKeys: [publicKeyFromPem(generatorKey)],
      threshold: 1,
      generators: [{ name: 'ci', keys: [publicKeyFromPem(generatorKey)], stacks: ['*'] }],
    }),
    revocations: undefined,
    stale: undefined,
    keyless: undefined,
    identity: { name: agentName, cluster: 'eu', labels: [] },
    now: new Date(),
  });

  it('apply --sign stores the signature before the content; the hub relays it with the object, and an agent’s checks take it', async () => {
    await keygen('ci');
    const gen = await createGenerator(hub);
    const agent = await createActiveAgent(hub, gen.id);
    const stack = uniqueName('signed');
    const dir = await manifestDir(stack, { 'a.yaml': configMap('a', '1') });
    const applied = await runCli(
      [
        'apply',
        '-f',
        dir,
        '--target',
        agent.name,
        '--sign',
        path.join(keys, 'ci.key'),
        '--signature-version',
        '7',
        '--sign-for',
        agent.name,
        '-o',
        'json',
      ],
      {
        env: hub.env(gen.pak),
      },
    );
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stderr).to.match(/signature stored \(content sha256 [0-9a-f]{12}…\)/);
    const object = JSON.parse(applied.stdout).deployment_object as { id: string; stack_id: string };
    const relayed = await agent.client.get(`/agents/${agent.id}/signatures`, { query: { deployment_object_ids: object.id } });
    const signature = relayed.body.deployment_objects[0].signature;
    const content = (await hub.admin.get(`/deployment-objects/${object.id}`)).body.yaml_content as string;
    const pub = await fs.readFile(path.join(keys, 'ci.pub'), 'utf8');
    const verdict = checkIntent(
      view(pub, agent.name),
      { stackId: object.stack_id, content, deletion: false, signed: signature },
      undefined,
    );
    expect(verdict.ok, JSON.stringify(verdict)).to.equal(true);
    expect(verdict.ok && verdict.statement.predicate).to.deep.include({ version: 7, generator: 'ci', targeting: { agents: [agent.name] } });

    // Unchanged content re-signed (e.g. by a new key after a revocation): the signature is stored, no new object.
    await keygen('ci-2');
    const again = await runCli(['apply', '-f', dir, '--sign', path.join(keys, 'ci-2.key'), '--signer', 'ci', '--signature-version', '7'], {
      env: hub.env(gen.pak),
    });
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.include('unchanged');
    const newest = (await agent.client.get(`/agents/${agent.id}/signatures`, { query: { deployment_object_ids: object.id } })).body
      .deployment_objects[0];
    expect(newest.signature).to.not.deep.equal(signature);
  });

  it('brokkr sign prints a bundle for a stack id without a hub, and refuses a key it cannot use', async () => {
    await keygen('offline');
    const dir = await manifestDir(uniqueName('offline'), { 'a.yaml': configMap('a', '2') });
    const stackId = '0b9a3f6e-8d8f-4a53-9d6f-1c1b1c7e2a11';
    const signed = await runCli([
      'sign',
      '-f',
      dir,
      '--stack',
      stackId,
      '--key',
      path.join(keys, 'offline.key'),
      '--signer',
      'ci',
      '--allow-rollback-to',
      '3',
      '--expires',
      '2h',
    ]);
    expect(signed.code, signed.stderr).to.equal(0);
    const bundle = JSON.parse(signed.stdout);
    expect(bundle.mediaType).to.equal('application/vnd.dev.sigstore.bundle.v0.3+json');
    const content = `# source: a.yaml\n${configMap('a', '2')}`;
    const pub = await fs.readFile(path.join(keys, 'offline.pub'), 'utf8');
    const verdict = checkIntent(view(pub), { stackId, content, deletion: false, signed: bundle }, undefined);
    expect(verdict.ok, JSON.stringify(verdict)).to.equal(true);
    expect(verdict.ok && verdict.statement.predicate.rollback).to.deep.equal({ allowTo: [3] });
    await fs.writeFile(path.join(keys, 'rsa.key'), '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n');
    const bad = await runCli(['sign', '-f', dir, '--stack', stackId, '--key', path.join(keys, 'rsa.key')]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('not a PEM private key');
  });

  it('brokkr trust signs a revocation list with a threshold gathered holder by holder, publishes it, and publishes timestamps', async () => {
    const [h1, h2] = [await keygen('holder-1'), await keygen('holder-2')];
    const doc = path.join(keys, 'revocations.json');
    await fs.writeFile(
      doc,
      JSON.stringify({ _type: 'https://brokkr.dev/trust/revocations/v1', version: 1, issuedAt: new Date().toISOString(), keyids: [h1] }),
    );
    const first = await runCli(['trust', 'sign', doc, '--key', path.join(keys, 'holder-1.key')]);
    expect(first.code, first.stderr).to.equal(0);
    await fs.writeFile(path.join(keys, 'rev.1.json'), first.stdout);
    const both = await runCli([
      'trust',
      'sign',
      doc,
      '--envelope',
      path.join(keys, 'rev.1.json'),
      '--key',
      path.join(keys, 'holder-2.key'),
    ]);
    const envelope = JSON.parse(both.stdout);
    expect(envelope.signatures.map((s: { keyid: string }) => s.keyid)).to.deep.equal([h1, h2]);
    await fs.writeFile(path.join(keys, 'rev.2.json'), both.stdout);
    const published = await runCli(['trust', 'publish', path.join(keys, 'rev.2.json')], { env: hub.env() });
    expect(published.stdout.trim()).to.equal('published revocations v1');
    await keygen('ts');
    const stamped = await runCli(['trust', 'timestamp', '--key', path.join(keys, 'ts.key'), '--valid-for', '2h'], { env: hub.env() });
    expect(stamped.code, stamped.stderr).to.equal(0);
    const metadata = (await hub.admin.get('/trust-metadata')).body;
    expect(readDocument(metadata.revocations, revocationsSchema).document.keyids).to.deep.equal([h1]);
    expect(readDocument(metadata.timestamp, timestampSchema).document).to.include({ version: 1, root: 1, revocations: 1 });
    // What `npm start -- --require-signatures` and the chart hand an agent parses as a policy.
    const root = buildRoot({
      version: 1,
      rootKeys: [privateKeyFromPem(await fs.readFile(path.join(keys, 'holder-1.key'), 'utf8'))],
      threshold: 1,
      generators: [],
    });
    expect(parseTrustPolicy({ root }).root.version).to.equal(1);
  });
});

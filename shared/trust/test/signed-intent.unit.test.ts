import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { bundleFromJSON } from '@sigstore/bundle';
import { DSSEBundleBuilder } from '@sigstore/sign';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import {
  advanceMetadata,
  buildRevocations,
  buildRoot,
  buildTimestamp,
  checkIntent,
  checkWorkOrder,
  countersign,
  generateSigningKey,
  intentStatement,
  keylessTrustMaterial,
  parseTrustPolicy,
  publicKeyFromPem,
  publicKeyPem,
  sha256Hex,
  signBytes,
  signDocument,
  signEnvelope,
  signIntent,
  signWorkOrder,
  staleness,
  type IntentPredicate,
  type MetadataState,
  type Root,
  type ServedObject,
  type StackRecord,
  type TrustView,
} from '@brokkr/trust';
import { startKeylessMock, type KeylessMock } from './support/sigstore-mock.ts';

const me = { name: 'edge-1', cluster: 'eu-west', labels: ['env-prod'] };
const stack = randomUUID();
const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "1"\n';

const rootKeys = [generateSigningKey(), generateSigningKey(), generateSigningKey('ecdsa-p256')];
const ci = generateSigningKey();
const ciEcdsa = generateSigningKey('ecdsa-p256');
const tsKey = generateSigningKey();

function root(
  version = 1,
  generators: Parameters<typeof buildRoot>[0]['generators'] = [
    { name: 'ci', keys: [ci.privateKey, ciEcdsa.privateKey], stacks: [stack], workOrders: true },
  ],
): Root {
  return buildRoot({ version, rootKeys: rootKeys.map((k) => k.privateKey), threshold: 2, timestampKeys: [tsKey.privateKey], generators });
}

function view(overrides: Partial<TrustView> = {}): TrustView {
  return { root: root(), revocations: undefined, stale: undefined, keyless: undefined, identity: me, now: new Date(), ...overrides };
}

const predicate = (p: Partial<IntentPredicate> = {}): IntentPredicate => ({
  stack,
  generator: 'ci',
  version: 1,
  kind: 'raw',
  issuedAt: new Date().toISOString(),
  ...p,
});

const served = (signed: unknown, content = yaml, o: Partial<ServedObject> = {}): ServedObject => ({
  stackId: stack,
  content,
  deletion: false,
  signed,
  ...o,
});
const reasonOf = (v: ReturnType<typeof checkIntent>) => (v.ok ? 'ok' : `${v.refusal.reason}: ${v.refusal.detail}`);

describe('signed intent: what an agent checks before it acts', () => {
  it('takes a deployment object signed by a key of the generator its scope covers, exactly as served', () => {
    const verdict = checkIntent(view(), served(signIntent(yaml, predicate(), ci.privateKey)), undefined);
    expect(reasonOf(verdict)).to.equal('ok');
    expect(verdict.ok && verdict.step).to.equal('first');
    expect(verdict.ok && verdict.record).to.deep.equal({
      version: 1,
      digest: sha256Hex(yaml),
      highest: 1,
      highestDigest: sha256Hex(yaml),
      allowTo: [],
    });
    expect(reasonOf(checkIntent(view(), served(signIntent(yaml, predicate(), ciEcdsa.privateKey)), undefined))).to.equal('ok');
  });

  it('refuses one byte changed in the content, the signature or the statement, with signature_invalid', () => {
    const signed = signIntent(yaml, predicate(), ci.privateKey);
    const flipped = yaml.replace('"1"', '"2"');
    expect(reasonOf(checkIntent(view(), served(signed, flipped), undefined))).to.match(
      /^signature_invalid: its content .* is not what was signed/,
    );
    const badSig = structuredClone(signed) as { dsseEnvelope: { signatures: { sig: string }[] } };
    const sig = Buffer.from(badSig.dsseEnvelope.signatures[0]!.sig, 'base64');
    sig[5]! ^= 1;
    badSig.dsseEnvelope.signatures[0]!.sig = sig.toString('base64');
    expect(reasonOf(checkIntent(view(), served(badSig), undefined))).to.match(/^signature_invalid: no key of generator "ci"/);
    const badPayload = structuredClone(signed) as { dsseEnvelope: { payload: string } };
    const payload = Buffer.from(badPayload.dsseEnvelope.payload, 'base64');
    payload[payload.indexOf('"version":1') + 10] = '2'.charCodeAt(0);
    badPayload.dsseEnvelope.payload = payload.toString('base64');
    expect(reasonOf(checkIntent(view(), served(badPayload), undefined))).to.match(/^signature_invalid/);
    expect(reasonOf(checkIntent(view(), served(undefined), undefined))).to.equal('signature_invalid: the hub relayed no signature for it');
    expect(reasonOf(checkIntent(view(), served({ nonsense: true }), undefined))).to.match(
      /^signature_invalid: neither a Sigstore bundle nor a DSSE envelope/,
    );
  });

  it('refuses a signature for another stack, by a key outside the scope, or of an unknown generator', () => {
    const other = randomUUID();
    expect(
      reasonOf(checkIntent(view(), served(signIntent(yaml, predicate(), ci.privateKey), yaml, { stackId: other }), undefined)),
    ).to.equal(`signature_invalid: it was signed for stack ${stack}, not ${other}`);
    expect(
      reasonOf(
        checkIntent(view(), served(signIntent(yaml, predicate({ stack: other }), ci.privateKey), yaml, { stackId: other }), undefined),
      ),
    ).to.equal(`signature_invalid: generator "ci" may not sign for stack ${other}`);
    const stranger = generateSigningKey();
    expect(reasonOf(checkIntent(view(), served(signIntent(yaml, predicate(), stranger.privateKey)), undefined))).to.equal(
      'signature_invalid: no key of generator "ci" made this signature',
    );
    expect(reasonOf(checkIntent(view(), served(signIntent(yaml, predicate({ generator: 'who' }), ci.privateKey)), undefined))).to.match(
      /^signature_invalid: generator "who" is not in the trust root/,
    );
  });

  it('refuses a deletion marker signed as content, content signed as a marker, and an expired signature', () => {
    expect(reasonOf(checkIntent(view(), served(signIntent('', predicate(), ci.privateKey), '', { deletion: true }), undefined))).to.equal(
      'signature_invalid: it was signed as kind raw, and served as deletion',
    );
    expect(
      reasonOf(
        checkIntent(view(), served(signIntent('', predicate({ kind: 'deletion' }), ci.privateKey), '', { deletion: true }), undefined),
      ),
    ).to.equal('ok');
    const expired = signIntent(yaml, predicate({ expires: new Date(Date.now() - 1000).toISOString() }), ci.privateKey);
    expect(reasonOf(checkIntent(view(), served(expired), undefined))).to.match(/^signature_invalid: the signature expired/);
  });

  it('checks the targeting against the identity the agent was installed with', () => {
    const check = (targeting: IntentPredicate['targeting']) =>
      reasonOf(checkIntent(view(), served(signIntent(yaml, predicate({ targeting }), ci.privateKey)), undefined));
    expect(check({ agents: ['edge-1'] })).to.equal('ok');
    expect(check({ agents: ['eu-west/edge-1'] })).to.equal('ok');
    expect(check({ labels: ['env-prod'] })).to.equal('ok');
    expect(check({ agents: ['edge-2'] })).to.equal('target_not_authorized: agent eu-west/edge-1 is not among the agents it was signed for');
    expect(check({ agents: ['us-east/edge-1'], labels: ['env-prod', 'gpu'] })).to.match(/^target_not_authorized/);
    expect(check({ agents: [] })).to.match(/^target_not_authorized/);
  });

  it('refuses an older version after a newer one, unless the newer allows the rollback; the same version again is fine', () => {
    const at = (version: number, content: string, allowTo?: number[]) =>
      served(signIntent(content, predicate({ version, ...(allowTo ? { rollback: { allowTo } } : {}) }), ci.privateKey), content);
    const v3 = `${yaml}# v3\n`;
    const v4 = `${yaml}# v4\n`;
    const v5 = `${yaml}# v5\n`;
    let record: StackRecord | undefined;
    for (const [version, content, allow] of [
      [3, v3],
      [5, v5, [4]],
    ] as const) {
      const verdict = checkIntent(view(), at(version, content, allow as number[] | undefined), record);
      expect(reasonOf(verdict)).to.equal('ok');
      record = verdict.ok ? verdict.record : record;
    }
    expect(reasonOf(checkIntent(view(), at(3, v3), record))).to.match(
      /^rollback_rejected: version 3 is older than version 5 taken before, which allows a rollback to 4/,
    );
    expect(reasonOf(checkIntent(view(), at(5, v4), record))).to.equal('rollback_rejected: version 5 was signed again with other content');
    const rolled = checkIntent(view(), at(4, v4), record);
    expect(reasonOf(rolled)).to.equal('ok');
    expect(rolled.ok && rolled.step).to.equal('rollback');
    record = rolled.ok ? rolled.record : record;
    expect(record).to.include({ version: 4, highest: 5 });
    expect(rolled.ok && checkIntent(view(), at(5, v5), record).ok, 'forward again to the highest').to.equal(true);
    expect(reasonOf(checkIntent(view(), at(4, v4), record))).to.equal('ok');
  });

  it('refuses a revoked key with key_revoked, and takes the same content re-signed by a new key', () => {
    const revocations = buildRevocations(1, { keys: [ci.privateKey] });
    expect(reasonOf(checkIntent(view({ revocations }), served(signIntent(yaml, predicate(), ci.privateKey)), undefined))).to.match(
      /^key_revoked: key [0-9a-f]{12}… of generator "ci" is revoked/,
    );
    expect(reasonOf(checkIntent(view({ revocations }), served(signIntent(yaml, predicate(), ciEcdsa.privateKey)), undefined))).to.equal(
      'ok',
    );
  });

  it('a signature checked again is judged again: a revocation, other bytes, another agent, a root without its key', () => {
    const signed = signIntent(yaml, predicate(), ci.privateKey);
    const current = view();
    expect(reasonOf(checkIntent(current, served(signed), undefined))).to.equal('ok');
    expect(reasonOf(checkIntent(current, served(signed), undefined))).to.equal('ok');
    // What verifying found is kept for this root; what is judged on every check is not.
    const revocations = buildRevocations(1, { keys: [ci.privateKey] });
    expect(reasonOf(checkIntent({ ...current, revocations }, served(signed), undefined))).to.match(/^key_revoked/);
    expect(reasonOf(checkIntent(current, served(signed, `${yaml}# changed\n`), undefined))).to.match(/^signature_invalid: its content/);
    expect(reasonOf(checkIntent({ ...current, identity: { ...me, name: 'edge-2' } }, served(signed), undefined))).to.equal('ok');
    // A root without the key: verified again, and refused.
    const withoutCi = root(2, [{ name: 'ci', keys: [ciEcdsa.privateKey], stacks: [stack] }]);
    expect(reasonOf(checkIntent({ ...current, root: withoutCi }, served(signed), undefined))).to.match(/^signature_invalid/);
    // A refusal is kept per root too, and a root that names the key again takes it.
    expect(reasonOf(checkIntent(current, served(signed), undefined))).to.equal('ok');
  });

  it('takes no new version while the metadata is stale, but the version it holds still resyncs', () => {
    const signed = served(signIntent(yaml, predicate({ version: 2 }), ci.privateKey));
    const stale = view({ stale: 'timestamp expired' });
    expect(reasonOf(checkIntent(stale, signed, undefined))).to.match(/^trust_metadata_stale: version 2 is not taken/);
    const held: StackRecord = { version: 2, digest: sha256Hex(yaml), highest: 2, highestDigest: sha256Hex(yaml), allowTo: [] };
    expect(reasonOf(checkIntent(stale, signed, held))).to.equal('ok');
  });

  it('runs a work order signed by a generator allowed work orders, for this agent, not expired', () => {
    const order = 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\n';
    const p = {
      generator: 'ci',
      workType: 'custom',
      nonce: 'nonce-12345678',
      issuedAt: new Date().toISOString(),
      expires: new Date(Date.now() + 60_000).toISOString(),
    };
    const check = (signed: unknown, content = order, v = view()) => {
      const verdict = checkWorkOrder(v, { workType: 'custom', content, signed });
      return verdict.ok ? 'ok' : `${verdict.refusal.reason}: ${verdict.refusal.detail}`;
    };
    expect(check(signWorkOrder(order, p, ci.privateKey))).to.equal('ok');
    expect(check(signWorkOrder(order, p, ci.privateKey), `${order}#`)).to.match(/^signature_invalid/);
    expect(check(signWorkOrder(order, { ...p, targeting: { agents: ['other'] } }, ci.privateKey))).to.match(/^target_not_authorized/);
    expect(check(signWorkOrder(order, { ...p, expires: new Date(Date.now() - 1).toISOString() }, ci.privateKey))).to.match(
      /^signature_invalid: the signature expired/,
    );
    const noOrders = view({ root: root(1, [{ name: 'ci', keys: [ci.privateKey], stacks: ['*'] }]) });
    expect(check(signWorkOrder(order, p, ci.privateKey), order, noOrders)).to.equal(
      'signature_invalid: generator "ci" may not sign work orders',
    );
    expect(check(undefined)).to.equal('signature_invalid: the hub relayed no signature for it');
  });
});

describe('trust metadata: root rotation, revocations, freshness', () => {
  const installed = root(1);
  const state = (): MetadataState => ({
    root: installed,
    rootEnvelope: undefined,
    revocations: undefined,
    revocationsEnvelope: undefined,
    timestamp: undefined,
    timestampEnvelope: undefined,
  });
  const ci2 = generateSigningKey();
  const rotated = root(2, [{ name: 'ci', keys: [ci2.privateKey], stacks: [stack] }]);
  const [k1, k2, k3] = rootKeys.map((k) => k.privateKey) as [
    ReturnType<typeof generateSigningKey>['privateKey'],
    ReturnType<typeof generateSigningKey>['privateKey'],
    ReturnType<typeof generateSigningKey>['privateKey'],
  ];

  it('takes a root rotation signed by 2 of 3 root keys (gathered one holder at a time), refuses one signed by 1 of 3', () => {
    const one = signDocument(rotated, [k1]);
    const below = advanceMetadata(state(), { roots: [one], revocations: null, timestamp: null });
    expect(below.state.root.version).to.equal(1);
    expect(below.problems).to.deep.equal(['root: root v2 by the keys of root v1: 1 valid signature(s) of 2 required']);
    const two = countersign(one, [k3]);
    const taken = advanceMetadata(state(), { roots: [two], revocations: null, timestamp: null });
    expect(taken.problems).to.deep.equal([]);
    expect(taken.state.root.version).to.equal(2);
    const signed = served(signIntent(yaml, predicate(), ci2.privateKey));
    expect(reasonOf(checkIntent(view({ root: taken.state.root }), signed, undefined))).to.equal('ok');
    expect(
      reasonOf(checkIntent(view({ root: taken.state.root }), served(signIntent(yaml, predicate(), ci.privateKey)), undefined)),
    ).to.match(/^signature_invalid/);
  });

  it('refuses a root that skips a version, a root signed by keys of no root, and a duplicate signature counted twice', () => {
    const skip = signDocument(root(3), [k1, k2]);
    expect(advanceMetadata(state(), { roots: [skip], revocations: null, timestamp: null }).problems[0]).to.equal(
      'root: root version 3 does not follow 1',
    );
    const outsiders = signDocument(rotated, [generateSigningKey().privateKey, generateSigningKey().privateKey]);
    expect(advanceMetadata(state(), { roots: [outsiders], revocations: null, timestamp: null }).state.root.version).to.equal(1);
    const twice = signDocument(rotated, [k1]);
    twice.signatures.push({ ...twice.signatures[0]! });
    expect(advanceMetadata(state(), { roots: [twice], revocations: null, timestamp: null }).state.root.version).to.equal(1);
  });

  it('takes a root-signed revocation list, never an older one than it holds, and no list signed below the threshold', () => {
    const list = (version: number, keys = [k1, k2]) => signDocument(buildRevocations(version, { keys: [ci.privateKey] }), keys);
    const first = advanceMetadata(state(), { roots: [], revocations: list(2), timestamp: null });
    expect(first.state.revocations?.version).to.equal(2);
    const older = advanceMetadata(first.state, { roots: [], revocations: list(1), timestamp: null });
    expect(older.state.revocations?.version).to.equal(2);
    expect(older.problems).to.deep.equal(['revocation list: v1 relayed, v2 held']);
    expect(advanceMetadata(state(), { roots: [], revocations: list(3, [k1]), timestamp: null }).state.revocations).to.equal(undefined);
  });

  it('says the metadata is stale without a timestamp, after it expires or ages, and when it names a list the hub withholds', () => {
    const now = new Date();
    expect(staleness(state(), 3_600_000, now)).to.equal('no signed timestamp has been relayed yet');
    const ts = (spec: Partial<Parameters<typeof buildTimestamp>[0]>) =>
      signDocument(buildTimestamp({ version: 1, root: 1, revocations: 0, validForMs: 600_000, ...spec }), [tsKey.privateKey]);
    const fresh = advanceMetadata(state(), { roots: [], revocations: null, timestamp: ts({}) }).state;
    expect(staleness(fresh, 3_600_000, now)).to.equal(undefined);
    expect(staleness(fresh, 3_600_000, new Date(now.getTime() + 700_000))).to.match(/^the newest timestamp \(v1\) expired at/);
    expect(staleness(fresh, 60_000, new Date(now.getTime() + 120_000))).to.match(/longer ago than the policy's maximum age$/);
    const withheld = advanceMetadata(state(), { roots: [], revocations: null, timestamp: ts({ version: 2, revocations: 4 }) }).state;
    expect(staleness(withheld, 3_600_000, now)).to.equal('timestamp v2 names revocation list v4, the hub relayed v0');
    const forged = advanceMetadata(state(), {
      roots: [],
      revocations: null,
      timestamp: signDocument(buildTimestamp({ version: 9, root: 1, revocations: 0, validForMs: 1e9 }), [ci.privateKey]),
    });
    expect(forged.state.timestamp).to.equal(undefined);
    expect(forged.problems[0]).to.match(/^timestamp: timestamp v9: 0 valid signature\(s\) of 1 required/);
    const noTimestampRole = { ...state(), root: buildRoot({ version: 1, rootKeys: [k1], threshold: 1, generators: [] }) };
    expect(staleness(noTimestampRole, 1, now)).to.equal(undefined);
  });

  it('reads a trust policy, and refuses one whose root names a key it does not hold', () => {
    const policy = parseTrustPolicy({ root: signDocument(installed, [k1]), identity: { labels: ['env-prod'] }, maxMetadataAge: '30m' });
    expect(policy).to.deep.include({ requireSignatures: true, labels: ['env-prod'], maxMetadataAgeMs: 1_800_000 });
    expect(policy.root.version).to.equal(1);
    const broken = structuredClone(installed);
    broken.roles.root.keyids.push('0'.repeat(64));
    expect(() => parseTrustPolicy({ root: broken })).to.throw(/root: .*is named by a role but not in keys/);
    const lying = structuredClone(installed);
    const [first] = Object.keys(lying.keys);
    lying.keys[first!] = { publicKey: publicKeyPem(ci.publicKey) };
    expect(() => parseTrustPolicy({ root: lying })).to.throw(/is not the id of its public key/);
    expect(() => parseTrustPolicy({ root: installed, maxMetadataAge: 'soon' })).to.throw(/maxMetadataAge/);
  });
});

describe('signed intent with the ecosystem’s own tools (sigstore-js)', function () {
  this.timeout(20_000);
  let mock: KeylessMock;
  const issuer = 'https://token.actions.githubusercontent.com';
  const subject = 'https://github.com/acme/app/.github/workflows/deploy.yml@refs/heads/main';

  before(async () => {
    mock = await startKeylessMock();
  });
  after(() => mock?.close());

  const keylessRoot = () => root(1, [{ name: 'ci', keyless: [{ issuer, subject: 'https://github\\.com/acme/.*' }], stacks: ['*'] }]);

  it('takes a keyless bundle made by sigstore-js (Fulcio certificate, Rekor entry) for an identity the generator names, offline', async () => {
    const bundle = await mock.sign(intentStatement(sha256Hex(yaml), predicate()), { issuer, subject });
    const keyless = keylessTrustMaterial(mock.trustedRoot);
    const verdict = checkIntent(view({ root: keylessRoot(), keyless }), served(bundle), undefined);
    expect(reasonOf(verdict)).to.equal('ok');
    expect(verdict.ok && verdict.signer).to.deep.include({ identity: { issuer, subject } });
    const otherRepo = await mock.sign(intentStatement(sha256Hex(yaml), predicate()), {
      issuer,
      subject: 'https://github.com/evil/app/x.yml@refs/heads/main',
    });
    expect(reasonOf(checkIntent(view({ root: keylessRoot(), keyless }), served(otherRepo), undefined))).to.match(
      /matches no keyless identity of "ci"$/,
    );
    const otherIssuer = await mock.sign(intentStatement(sha256Hex(yaml), predicate()), { issuer: 'https://accounts.example.com', subject });
    expect(reasonOf(checkIntent(view({ root: keylessRoot(), keyless }), served(otherIssuer), undefined))).to.match(
      /matches no keyless identity/,
    );
    const revocations = buildRevocations(1, { identities: [{ issuer, subject }] });
    expect(reasonOf(checkIntent(view({ root: keylessRoot(), keyless, revocations }), served(bundle), undefined))).to.match(
      /^key_revoked: identity/,
    );
  });

  it('refuses a keyless bundle whose certificate lost one byte of its signature, after the intact one verified (kept encodings are per certificate)', async () => {
    const bundle = await mock.sign(intentStatement(sha256Hex(yaml), predicate()), { issuer, subject });
    const keyless = keylessTrustMaterial(mock.trustedRoot);
    expect(reasonOf(checkIntent(view({ root: keylessRoot(), keyless }), served(structuredClone(bundle)), undefined))).to.equal('ok');
    const tampered = structuredClone(bundle) as {
      verificationMaterial: { x509CertificateChain: { certificates: { rawBytes: string }[] } };
    };
    const [leaf] = tampered.verificationMaterial.x509CertificateChain.certificates;
    const der = Buffer.from(leaf!.rawBytes, 'base64');
    der[der.length - 1]! ^= 0x01;
    leaf!.rawBytes = der.toString('base64');
    expect(reasonOf(checkIntent(view({ root: keylessRoot(), keyless }), served(tampered), undefined))).to.match(
      /^signature_invalid: the keyless signature does not verify/,
    );
  });

  it('refuses a keyless bundle whose certificate chains to no trusted root', async () => {
    const bundle = await mock.sign(intentStatement(sha256Hex(yaml), predicate()), { issuer, subject });
    const elsewhere = await startKeylessMock();
    try {
      const verdict = checkIntent(
        view({ root: keylessRoot(), keyless: keylessTrustMaterial(elsewhere.trustedRoot) }),
        served(bundle),
        undefined,
      );
      expect(reasonOf(verdict)).to.match(/^signature_invalid: the keyless signature does not verify/);
      expect(reasonOf(checkIntent(view({ root: keylessRoot() }), served(bundle), undefined))).to.match(/no Sigstore trusted root/);
    } finally {
      elsewhere.close();
    }
  });

  it('takes a keyed bundle built by @sigstore/sign, and a bare DSSE envelope without a key id (cosign attest-blob --key)', async () => {
    const statement = intentStatement(sha256Hex(yaml), predicate());
    const builder = new DSSEBundleBuilder({
      signer: {
        sign: async (data: Buffer) => ({
          signature: signBytes(ciEcdsa.privateKey, data),
          key: { $case: 'publicKey', publicKey: publicKeyPem(ciEcdsa.publicKey) },
        }),
      },
      witnesses: [],
    });
    const bundle = await builder.create({ data: Buffer.from(JSON.stringify(statement)), type: 'application/vnd.in-toto+json' });
    const { bundleToJSON } = await import('@sigstore/bundle');
    expect(reasonOf(checkIntent(view(), served(bundleToJSON(bundle)), undefined))).to.equal('ok');
    const bare = signEnvelope('application/vnd.in-toto+json', Buffer.from(JSON.stringify(statement)), [ciEcdsa.privateKey]);
    bare.signatures[0]!.keyid = '';
    expect(reasonOf(checkIntent(view(), served(bare), undefined))).to.equal('ok');
  });

  it('takes a keyed attestation made by cosign attest-blob (v2.6.5, Statement v0.1, no key id) for the bytes it names only', async () => {
    const fixture = (name: string) => readFile(new URL(`./fixtures/cosign/${name}`, import.meta.url), 'utf8');
    const [bundle, pem, content, pred] = await Promise.all(
      ['attest-blob.bundle.json', 'generator.pub', 'content.yaml', 'predicate.json'].map(fixture),
    );
    const { stack: stackId } = JSON.parse(pred!) as { stack: string };
    const cosignRoot = buildRoot({
      version: 1,
      rootKeys: [rootKeys[0]!.privateKey],
      threshold: 1,
      generators: [{ name: 'ci', keys: [publicKeyFromPem(pem!)], stacks: ['*'] }],
    });
    const signed = JSON.parse(bundle!) as unknown;
    expect(reasonOf(checkIntent(view({ root: cosignRoot }), served(signed, content!, { stackId }), undefined))).to.equal('ok');
    expect(reasonOf(checkIntent(view({ root: cosignRoot }), served(signed, `${content!}#\n`, { stackId }), undefined))).to.match(
      /^signature_invalid: its content/,
    );
    expect(reasonOf(checkIntent(view(), served(signed, content!, { stackId }), undefined))).to.match(/^signature_invalid/);
  });

  it('makes bundles that @sigstore/verify verifies with the generator’s public key', () => {
    const signed = signIntent(yaml, predicate(), ciEcdsa.privateKey);
    const hint = signed.verificationMaterial.publicKey!.hint;
    // The key is named by the hint only: cosign verify-blob-attestation --key skips a DSSE signature
    // whose keyid is not its own fingerprint of the key (checked by hand with cosign v2.6.5).
    expect(signed.dsseEnvelope!.signatures.map((s) => s.keyid)).to.deep.equal(['']);
    const emptyRoot = TrustedRoot.fromJSON({
      mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
      tlogs: [],
      certificateAuthorities: [],
      ctlogs: [],
      timestampAuthorities: [],
    });
    const material = toTrustMaterial(emptyRoot, (h) => {
      expect(h).to.equal(hint);
      return { publicKey: ciEcdsa.publicKey, validFor: () => true };
    });
    const signer = new Verifier(material, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(
      toSignedEntity(bundleFromJSON(signed)),
    );
    expect(signer.key.equals(ciEcdsa.publicKey)).to.equal(true);
  });
});

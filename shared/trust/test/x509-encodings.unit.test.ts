import { expect } from 'chai';
import { ASN1Obj, EXTENSION_OID_SCT, X509Certificate } from '@sigstore/core';
import { buildRoot, checkIntent, generateSigningKey, intentStatement, keylessTrustMaterial, sha256Hex } from '@brokkr/trust';
import { copyTree, encodeDer } from '../src/asn1-der.ts';
import { keepCertificateEncodings } from '../src/x509-encodings.ts';
import { startKeylessMock, type KeylessMock } from './support/sigstore-mock.ts';

// The library's own DER writer, taken before anything installs ours (mocha imports every test file
// before it runs a test; the writers are installed by the first keyless trust material made).
const libraryToDER = ASN1Obj.prototype.toDER;

const issuer = 'https://token.actions.githubusercontent.com';
const subject = 'https://github.com/acme/app/.github/workflows/deploy.yml@refs/heads/main';
const stack = '0d9f3c2e-6f7a-4b1e-9a53-2c8e1f0b7d41';
const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n';

type KeylessBundle = { verificationMaterial: { x509CertificateChain: { certificates: { rawBytes: string }[] } } };
const leafDer = (bundle: object) =>
  Buffer.from((bundle as KeylessBundle).verificationMaterial.x509CertificateChain.certificates[0]!.rawBytes, 'base64');
const caDer = (mock: KeylessMock) => {
  const [ca] = mock.trustedRoot.certificateAuthorities as { certChain: { certificates: { rawBytes: string }[] } }[];
  return Buffer.from(ca!.certChain.certificates[0]!.rawBytes, 'base64');
};

/** DER of an OCTET STRING of `length` zero bytes (its content parses as no ASN.1, so it stays a primitive). */
function octetString(length: number): Buffer<ArrayBuffer> {
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  const header = length < 128 ? [0x04, length] : [0x04, 0x80 | bytes.length, ...bytes];
  const der = Buffer.alloc(header.length + length);
  der.set(header);
  return der;
}

describe('keyless verification: the DER writer and the kept certificate verdicts', function () {
  this.timeout(20_000);
  let mock: KeylessMock;
  let elsewhere: KeylessMock;
  let bundle: Record<string, unknown>;

  before(async () => {
    expect(libraryToDER.toString(), 'the library’s own writer was taken').to.include('ByteStream');
    mock = await startKeylessMock();
    bundle = await mock.sign(
      intentStatement(sha256Hex(yaml), { stack, generator: 'ci', version: 1, kind: 'raw', issuedAt: new Date().toISOString() }),
      {
        issuer,
        subject,
      },
    );
    elsewhere = await startKeylessMock();
  });
  after(() => {
    mock?.close();
    elsewhere?.close();
  });

  it('writes what @sigstore/core writes: a certificate, its TBS, a copy without its SCT extension, every length form', () => {
    const leaf = X509Certificate.parse(leafDer(bundle));
    const ca = X509Certificate.parse(caDer(mock));
    for (const [cert, der] of [
      [leaf, leafDer(bundle)],
      [ca, caDer(mock)],
    ] as const) {
      expect(encodeDer(cert.root).equals(der)).to.equal(true);
      expect(encodeDer(cert.tbsCertificate).equals(libraryToDER.call(cert.tbsCertificate))).to.equal(true);
    }
    const copy = new X509Certificate(copyTree(leaf.root));
    const sct = copy.extensions.findIndex((ext) => ext.subs[0]!.toOID() === EXTENSION_OID_SCT);
    expect(sct).to.be.greaterThan(-1);
    copy.extensions.splice(sct, 1);
    const withoutSct = encodeDer(copy.tbsCertificate);
    expect(withoutSct.equals(libraryToDER.call(copy.tbsCertificate))).to.equal(true);
    expect(withoutSct.length).to.be.lessThan(encodeDer(leaf.tbsCertificate).length);
    expect(encodeDer(leaf.root).equals(leafDer(bundle)), 'the copy’s change leaves the original whole').to.equal(true);
    for (const length of [0, 1, 127, 128, 255, 256, 65_535, 65_536, 70_000]) {
      const der = octetString(length);
      const parsed = ASN1Obj.parseBuffer(der);
      expect(encodeDer(parsed).equals(der), `length ${length}`).to.equal(true);
      expect(encodeDer(parsed).equals(libraryToDER.call(parsed)), `length ${length}`).to.equal(true);
    }
  });

  it('keeps a verdict per issuer: a leaf verifies by its CA only, and a copy with one byte changed does not', () => {
    keepCertificateEncodings();
    const ca = X509Certificate.parse(caDer(mock));
    const otherCa = X509Certificate.parse(caDer(elsewhere));
    const leaf = X509Certificate.parse(leafDer(bundle));
    expect([ca.verify(), ca.verify(), otherCa.verify()]).to.deep.equal([true, true, true]);
    expect([leaf.verify(ca), leaf.verify(otherCa), leaf.verify(), leaf.verify(ca)]).to.deep.equal([true, false, false, true]);
    const tampered = leafDer(bundle);
    tampered[tampered.length - 1]! ^= 0x01;
    expect(X509Certificate.parse(tampered).verify(ca)).to.equal(false);
    expect(ca.verify(otherCa)).to.equal(false);
  });

  it('refuses a bundle from another Fulcio after one from the trusted Fulcio verified with the same trust material', async () => {
    const keyless = keylessTrustMaterial(mock.trustedRoot);
    const root = buildRoot({
      version: 1,
      rootKeys: [generateSigningKey().privateKey],
      threshold: 1,
      generators: [{ name: 'ci', keyless: [{ issuer, subject: 'https://github\\.com/acme/.*' }], stacks: ['*'] }],
    });
    const view = {
      root,
      revocations: undefined,
      stale: undefined,
      keyless,
      identity: { name: 'e', cluster: 'c', labels: [] },
      now: new Date(),
    };
    const served = (signed: unknown) => ({ stackId: stack, content: yaml, deletion: false, signed });
    expect(checkIntent(view, served(structuredClone(bundle)), undefined).ok).to.equal(true);
    // Both mocks answer at the same addresses: only the new Fulcio and Rekor are left to sign with.
    mock.close();
    const foreignFulcio = await startKeylessMock();
    try {
      const foreign = await foreignFulcio.sign(
        intentStatement(sha256Hex(yaml), { stack, generator: 'ci', version: 1, kind: 'raw', issuedAt: new Date().toISOString() }),
        { issuer, subject },
      );
      const verdict = checkIntent(view, served(foreign), undefined);
      expect(verdict.ok ? 'ok' : verdict.refusal.detail).to.match(/^the keyless signature does not verify/);
    } finally {
      foreignFulcio.close();
    }
  });
});

import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { ASN1Obj, X509Certificate } from '@sigstore/core';
import { copyTree, encodeDer } from './asn1-der.ts';

/**
 * @sigstore/core re-encodes a certificate into DER from its parsed ASN.1 tree every time it
 * compares two certificates, copies one or checks a signature on one, and the chain builder of
 * @sigstore/verify compares every candidate pair: about half of a keyless verification's CPU was
 * spent writing the same bytes again (ADR 0047). Each certificate here keeps the encodings it
 * has made and its public key once made.
 *
 * A parsed certificate never changes in these libraries with one exception: the SCT check copies
 * the leaf (`clone`) and removes an extension from the copy before encoding its TBS itself. The copy
 * is a new certificate with nothing kept yet, and its TBS is encoded by the caller, not here, so
 * what is kept is always what the certificate holds. `verify` keeps the library's own semantics
 * (its issuer's key, else its own; false instead of a throw), and its verdict per issuer: it
 * depends only on the two certificates' bytes, which do not change, so the trusted root's check of
 * its own signature is made once per trust material, not once per keyless signature (ADR 0054);
 * a leaf is a new certificate object per signature and is always checked.
 */
interface Kept {
  der?: Buffer;
  tbs?: Buffer;
  key?: KeyObject;
  /**
   * `verify`'s verdict by issuer certificate (itself for a self-signed one). Weak: a trusted
   * certificate may be asked about a bundle's certificate as its issuer (the chain builder tries
   * every certificate it holds), and must not keep that certificate alive with the trust material.
   */
  verdicts?: WeakMap<X509Certificate, boolean>;
}

const kept = new WeakMap<X509Certificate, Kept>();

function keptOf(cert: X509Certificate): Kept {
  let entry = kept.get(cert);
  if (!entry) kept.set(cert, (entry = {}));
  return entry;
}

function derOf(cert: X509Certificate): Buffer {
  const entry = keptOf(cert);
  return (entry.der ??= cert.root.toDER());
}

function keyOf(cert: X509Certificate): KeyObject {
  const entry = keptOf(cert);
  return (entry.key ??= createPublicKey({ key: cert.publicKey, format: 'der', type: 'spki' }));
}

let installed = false;

function verifiedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  const entry = keptOf(cert);
  const tbs = (entry.tbs ??= cert.tbsCertificate.toDER());
  try {
    return verify(cert.signatureAlgorithm, tbs, keyOf(issuer), cert.signatureValue);
  } catch {
    return false;
  }
}

/**
 * Installs the kept encodings on @sigstore/core's X509Certificate, and its one-buffer DER writer
 * on ASN1Obj (once per process).
 */
export function keepCertificateEncodings(): void {
  if (installed) return;
  installed = true;
  ASN1Obj.prototype.toDER = function toDER(this: ASN1Obj): Buffer {
    return encodeDer(this);
  };
  const proto = X509Certificate.prototype;
  proto.equals = function equals(this: X509Certificate, other: X509Certificate): boolean {
    return derOf(this).equals(derOf(other));
  };
  proto.clone = function clone(this: X509Certificate): X509Certificate {
    return new X509Certificate(copyTree(this.root));
  };
  proto.verify = function verifyIssued(this: X509Certificate, issuer?: X509Certificate): boolean {
    const by = issuer ?? this;
    const verdicts = (keptOf(this).verdicts ??= new WeakMap());
    let verdict = verdicts.get(by);
    if (verdict === undefined) verdicts.set(by, (verdict = verifiedBy(this, by)));
    return verdict;
  };
}

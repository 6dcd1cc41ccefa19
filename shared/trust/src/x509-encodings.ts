import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { X509Certificate } from '@sigstore/core';

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
 * (its issuer's key, else its own; false instead of a throw).
 */
interface Kept {
  der?: Buffer;
  tbs?: Buffer;
  key?: KeyObject;
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

/** Installs the kept encodings on @sigstore/core's X509Certificate (once per process). */
export function keepCertificateEncodings(): void {
  if (installed) return;
  installed = true;
  const proto = X509Certificate.prototype;
  proto.equals = function equals(this: X509Certificate, other: X509Certificate): boolean {
    return derOf(this).equals(derOf(other));
  };
  proto.clone = function clone(this: X509Certificate): X509Certificate {
    return X509Certificate.parse(Buffer.from(derOf(this)));
  };
  proto.verify = function verifyIssued(this: X509Certificate, issuer?: X509Certificate): boolean {
    const entry = keptOf(this);
    const tbs = (entry.tbs ??= this.tbsCertificate.toDER());
    try {
      return verify(this.signatureAlgorithm, tbs, keyOf(issuer ?? this), this.signatureValue);
    } catch {
      return false;
    }
  };
}

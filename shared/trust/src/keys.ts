import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { sha256Hex } from './digest.ts';

/**
 * The signing keys a trust policy names: Ed25519, or ECDSA on P-256 with SHA-256 (what cosign's
 * `generate-key-pair` makes). A key is named by its key id: the SHA-256 of its SubjectPublicKeyInfo
 * (DER), hex, so one key has one id whatever PEM spelling carries it.
 */
export type KeyAlgorithm = 'ed25519' | 'ecdsa-p256';

export class KeyError extends Error {}

/** A public key from PEM (SPKI), refused unless it is Ed25519 or ECDSA P-256. */
export function publicKeyFromPem(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new KeyError(`not a PEM public key: ${(err as Error).message}`);
  }
  algorithmOf(key);
  return key;
}

/** A private key from PEM (PKCS#8, or SEC1 for EC), refused unless Ed25519 or ECDSA P-256. */
export function privateKeyFromPem(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new KeyError(`not a PEM private key (an encrypted one is not read here): ${(err as Error).message}`);
  }
  algorithmOf(key);
  return key;
}

export function algorithmOf(key: KeyObject): KeyAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ecdsa-p256';
  const curve = key.asymmetricKeyDetails?.namedCurve;
  throw new KeyError(`unsupported key type ${key.asymmetricKeyType ?? '?'}${curve ? ` (${curve})` : ''}: use Ed25519 or ECDSA P-256`);
}

/** The key id: SHA-256 of the public key's SubjectPublicKeyInfo (DER), hex. */
export function keyIdOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return sha256Hex(pub.export({ type: 'spki', format: 'der' }));
}

export function publicKeyPem(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ type: 'spki', format: 'pem' }).toString();
}

export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Signs `data` (Ed25519 as is; ECDSA over its SHA-256, DER-encoded as DSSE and Sigstore expect). */
export function signBytes(privateKey: KeyObject, data: Buffer): Buffer {
  return sign(algorithmOf(privateKey) === 'ed25519' ? null : 'sha256', data, privateKey);
}

export function verifyBytes(publicKey: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    return verify(algorithmOf(publicKey) === 'ed25519' ? null : 'sha256', data, publicKey, signature);
  } catch {
    return false;
  }
}

/** A new key pair for a generator, a root key holder or a timestamp signer. */
export function generateSigningKey(algorithm: KeyAlgorithm = 'ed25519'): { privateKey: KeyObject; publicKey: KeyObject; keyId: string } {
  const pair = algorithm === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, keyId: keyIdOf(pair.publicKey) };
}

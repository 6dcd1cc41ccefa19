import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { BrokkrError, ConfigError } from '@brokkr/errors';

/**
 * Brokkr's at-rest envelope for webhook URLs and auth headers, kept byte-compatible so a database
 * written by Brokkr (or by us) reads back in either:
 *   v1:     0x01 ‖ 12-byte nonce ‖ AES-256-GCM ciphertext ‖ 16-byte tag (no AAD)
 *   legacy: [0x00] ‖ 16-byte nonce ‖ plaintext XOR sha256(key ‖ nonce) repeated — read only.
 */
const VERSION_GCM = 0x01;
const VERSION_LEGACY = 0x00;
const GCM_NONCE_BYTES = 12;
const GCM_TAG_BYTES = 16;
const LEGACY_NONCE_BYTES = 16;
const KEY_BYTES = 32;

/** Wrong key, tampered bytes or an unknown layout. The message never contains the plaintext. */
export class DecryptionError extends BrokkrError {}

export interface WebhookKey {
  readonly bytes: Buffer;
  /** The same key prepared once for the cipher (building it per call is measurable at scale). */
  readonly keyObject: KeyObject;
  /** Hex of the first 8 bytes of sha256(key): safe to log, tells operators which key is in use. */
  readonly fingerprint: string;
  /** False when no key was configured and a random one was minted for this process. */
  readonly configured: boolean;
}

export function keyFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest().subarray(0, 8).toString('hex');
}

/**
 * The key from `BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY` (64 hex characters). Unset or empty
 * gives a random per-process key, as Brokkr does: anything encrypted with it is unreadable after
 * a restart, which is why services refuse to start that way once subscriptions exist.
 */
export function loadWebhookKey(hex: string | undefined): WebhookKey {
  if (hex === undefined || hex === '') {
    const bytes = randomBytes(KEY_BYTES);
    return { bytes, keyObject: createSecretKey(bytes), fingerprint: keyFingerprint(bytes), configured: false };
  }
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new ConfigError('BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY must be 64 hexadecimal characters', [
      'BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY',
    ]);
  }
  const bytes = Buffer.from(hex, 'hex');
  return { bytes, keyObject: createSecretKey(bytes), fingerprint: keyFingerprint(bytes), configured: true };
}

export function encrypt(key: WebhookKey, plaintext: string | Buffer): Buffer {
  const nonce = randomBytes(GCM_NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.keyObject, nonce);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.of(VERSION_GCM), nonce, body, cipher.getAuthTag()]);
}

function decryptGcm(key: KeyObject, data: Buffer): Buffer {
  if (data.length < GCM_NONCE_BYTES + GCM_TAG_BYTES) throw new DecryptionError('ciphertext too short');
  const nonce = data.subarray(0, GCM_NONCE_BYTES);
  const tag = data.subarray(data.length - GCM_TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(data.subarray(GCM_NONCE_BYTES, data.length - GCM_TAG_BYTES)), decipher.final()]);
  } catch (err) {
    throw new DecryptionError('decryption failed (wrong key or tampered data)', { cause: err });
  }
}

// The legacy scheme has no integrity check: a wrong key yields garbage, not an error. It is kept
// only so rows written by old Brokkr versions stay readable; nothing is ever written this way.
function decryptLegacy(key: Buffer, data: Buffer): Buffer {
  if (data.length < LEGACY_NONCE_BYTES) throw new DecryptionError('legacy ciphertext too short');
  const mask = createHash('sha256').update(key).update(data.subarray(0, LEGACY_NONCE_BYTES)).digest();
  const body = data.subarray(LEGACY_NONCE_BYTES);
  const out = Buffer.allocUnsafe(body.length);
  for (let i = 0; i < body.length; i++) out[i] = body[i]! ^ mask[i % mask.length]!;
  return out;
}

export function decrypt(key: WebhookKey, data: Buffer): Buffer {
  if (data.length === 0) throw new DecryptionError('empty ciphertext');
  if (data[0] === VERSION_GCM) return decryptGcm(key.keyObject, data.subarray(1));
  if (data[0] === VERSION_LEGACY) return decryptLegacy(key.bytes, data.subarray(1));
  // Brokkr's oldest rows carry no version byte at all.
  return decryptLegacy(key.bytes, data);
}

export function decryptString(key: WebhookKey, data: Buffer): string {
  const bytes = decrypt(key, data);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new DecryptionError('decrypted value is not valid UTF-8', { cause: err });
  }
}

import { hash, randomBytes } from 'node:crypto';
import { base58Encode } from './base58.ts';

/**
 * Prefixed API keys in Brokkr's format: `brokkr_BR<6 base58>_<base58 of 24 random bytes>`.
 * Only the third segment (the long token) is secret; its SHA-256 is what the database stores,
 * so a PAK minted here works against Brokkr's broker and the other way round.
 */
const PREFIX = 'brokkr';
const SHORT_TOKEN_PREFIX = 'BR';
const SHORT_TOKEN_LENGTH = 8;
const SHORT_RANDOM_BYTES = 8;
const LONG_RANDOM_BYTES = 24;

export interface MintedPak {
  pak: string;
  hash: string;
}

export function hashLongToken(longToken: string): string {
  // One-shot crypto.hash: no Hash object per call (every request's PAK is hashed).
  return hash('sha256', longToken, 'hex');
}

export function generatePak(): MintedPak {
  const short = (SHORT_TOKEN_PREFIX + base58Encode(randomBytes(SHORT_RANDOM_BYTES))).slice(0, SHORT_TOKEN_LENGTH);
  const long = base58Encode(randomBytes(LONG_RANDOM_BYTES));
  return { pak: `${PREFIX}_${short}_${long}`, hash: hashLongToken(long) };
}

/**
 * The hash of a presented PAK, or undefined when it does not split into exactly three `_` parts
 * (Brokkr checks nothing else: neither the prefix nor the short token).
 */
export function hashPresentedPak(pak: string): string | undefined {
  const parts = pak.split('_');
  if (parts.length !== 3) return undefined;
  return hashLongToken(parts[2] ?? '');
}

/** `Authorization: Bearer <pak>`, `bearer <pak>` or the bare PAK; the value is trimmed. */
export function pakFromAuthorization(header: string): string {
  const value = header.trim();
  for (const scheme of ['Bearer ', 'bearer ']) {
    if (value.startsWith(scheme)) return value.slice(scheme.length).trim();
  }
  return value;
}

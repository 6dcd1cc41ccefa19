import { createHash } from 'node:crypto';
import { SourceError } from './errors.ts';

/** `sha256:<hex>` of the bytes: the store's key and what a deployment object pins. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

export function isSha256Digest(value: unknown): value is string {
  return typeof value === 'string' && DIGEST.test(value);
}

/** Refuses bytes whose digest is not the one their index or manifest promised. */
export function assertDigest(bytes: Uint8Array, expected: string, what: string): string {
  const actual = sha256Digest(bytes);
  if (actual !== expected) {
    throw new SourceError('source_digest_mismatch', `${what} does not match its digest: expected ${expected}, got ${actual}`, {
      expected,
      actual,
    });
  }
  return actual;
}

/** A .tar.gz starts with gzip's magic bytes; anything else is refused before it is stored. */
export function assertGzip(bytes: Uint8Array, what: string): void {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw new SourceError('invalid_source', `${what} is not a gzip-compressed archive (.tgz)`);
  }
}

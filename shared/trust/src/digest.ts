import { hash } from 'node:crypto';

/** The SHA-256 of `bytes` (a string is taken as its UTF-8 bytes), as lower-case hex: what a statement's subject digest holds. */
export function sha256Hex(bytes: string | Uint8Array): string {
  return hash('sha256', bytes, 'hex');
}

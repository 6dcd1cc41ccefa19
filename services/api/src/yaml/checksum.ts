import { hash } from 'node:crypto';

/** Brokkr's yaml_checksum: lowercase hex SHA-256 of the content's UTF-8 bytes. */
export function yamlChecksum(content: string): string {
  // One-shot crypto.hash: no Hash object per call (every deployment object is hashed on the hot path).
  return hash('sha256', content, 'hex');
}

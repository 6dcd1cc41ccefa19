import { createHash } from 'node:crypto';

/** Brokkr's yaml_checksum: lowercase hex SHA-256 of the content's UTF-8 bytes. */
export function yamlChecksum(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

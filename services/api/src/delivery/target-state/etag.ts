import { createHash } from 'node:crypto';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';

/**
 * Strong ETag over what identifies the answer: the mode, the agent's grants and each object's id,
 * sequence id and checksum (an agent's render of the same object may change: an override layer).
 */
export function targetStateEtag(rows: readonly DeploymentObjectRow[], full: boolean, grants: string): string {
  const hash = createHash('sha256').update(`${full ? 'full' : 'incremental'}:${grants}`);
  for (const row of rows) hash.update(`\n${row.id}:${row.sequence_id}:${row.yaml_checksum}`);
  return `"ts-${hash.digest('base64url').slice(0, 32)}"`;
}

/** RFC 9110 §13.1.2: a list of entity tags (weak ones compared weakly) or `*`. */
export function ifNoneMatchHits(header: string, etag: string): boolean {
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

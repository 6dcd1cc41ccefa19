import { prepared, type Queryable } from '@brokkr/db';

/** The newest signature stored for one content of a stack: its JSON text as stored, and the SHA-256 that names it. */
export interface StoredSignatureText {
  stack_id: string;
  content_digest: string;
  bundle: string;
  bundle_sha256: string;
}

// For each (stack, content digest) asked about, the newest signature stored (the relay's rule:
// GET /agents/{id}/signatures serves the same one). One probe of idx_signatures_stack_content each.
const servedSignatures = prepared(
  'brokkr_target_state_signatures',
  `SELECT k.stack_id, k.content_digest, s.bundle::text AS bundle, s.bundle_sha256
     FROM unnest($1::uuid[], $2::text[]) AS k(stack_id, content_digest)
     CROSS JOIN LATERAL (
       SELECT bundle, bundle_sha256 FROM signatures s
        WHERE s.stack_id = k.stack_id AND s.content_digest = k.content_digest
        ORDER BY s.version DESC NULLS LAST, s.id DESC LIMIT 1
     ) s`,
);

/** The signatures of these contents; a content without one is absent from the answer. */
export async function queryServedSignatures(
  db: Queryable,
  keys: readonly { stackId: string; digest: string }[],
): Promise<StoredSignatureText[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<StoredSignatureText>(servedSignatures([keys.map((k) => k.stackId), keys.map((k) => k.digest)]));
  return rows;
}

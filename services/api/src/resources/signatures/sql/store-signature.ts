import { prepared, type Queryable } from '@brokkr/db';
import type { StoredSignature } from '@brokkr/contracts';

const RETURNED = `id::text, stack_id, work_type, content_digest, version::float8 AS version, created_at`;

// One row per distinct signature: storing the same bundle again returns the row stored first.
const insertStatement = prepared(
  'brokkr_signature_store',
  `WITH ins AS (
     INSERT INTO signatures (stack_id, work_type, content_digest, version, bundle, bundle_sha256)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (bundle_sha256) DO NOTHING
     RETURNING ${RETURNED}
   )
   SELECT * FROM ins
   UNION ALL
   SELECT ${RETURNED} FROM signatures WHERE bundle_sha256 = $6 AND NOT EXISTS (SELECT 1 FROM ins)`,
);

export interface NewSignatureRow {
  stackId: string | null;
  workType: string | null;
  contentDigest: string;
  version: number | null;
  bundle: Record<string, unknown>;
  bundleSha256: string;
}

export async function storeSignature(db: Queryable, s: NewSignatureRow): Promise<StoredSignature> {
  const { rows } = await db.query<StoredSignature>(
    insertStatement([s.stackId, s.workType, s.contentDigest, s.version, JSON.stringify(s.bundle), s.bundleSha256]),
  );
  return rows[0]!;
}

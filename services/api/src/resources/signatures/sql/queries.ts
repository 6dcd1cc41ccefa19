import { prepared, type Queryable } from '@brokkr/db';
import type { AgentSignatures, TrustMetadata, TrustMetadataKind } from '@brokkr/contracts';

// A deployment object's signature: the newest stored for its stack and content (yaml_checksum is
// the SHA-256 of the stored YAML). A row changed in the database after signing keeps its old
// checksum or gets a new one: either way the agent's own hash of the bytes it receives decides.
const objectSignatures = prepared(
  'brokkr_signatures_for_objects',
  `SELECT d.id AS deployment_object_id, s.bundle AS signature
     FROM deployment_objects d
     CROSS JOIN LATERAL (
       SELECT bundle FROM signatures s
        WHERE s.stack_id = d.stack_id AND s.content_digest = d.yaml_checksum
        ORDER BY s.version DESC NULLS LAST, s.id DESC LIMIT 1
     ) s
    WHERE d.id = ANY($1::uuid[])`,
);

const orderSignatures = prepared(
  'brokkr_signatures_for_work_orders',
  `SELECT w.id AS work_order_id, s.bundle AS signature
     FROM work_orders w
     CROSS JOIN LATERAL (
       SELECT bundle FROM signatures s
        WHERE s.stack_id IS NULL AND s.work_type = w.work_type
          AND s.content_digest = encode(sha256(convert_to(w.yaml_content, 'UTF8')), 'hex')
        ORDER BY s.id DESC LIMIT 1
     ) s
    WHERE w.id = ANY($1::uuid[])`,
);

export async function signaturesFor(db: Queryable, objectIds: string[], workOrderIds: string[]): Promise<AgentSignatures> {
  const [objects, orders] = await Promise.all([
    objectIds.length ? db.query<AgentSignatures['deployment_objects'][number]>(objectSignatures([objectIds])) : { rows: [] },
    workOrderIds.length ? db.query<AgentSignatures['work_orders'][number]>(orderSignatures([workOrderIds])) : { rows: [] },
  ]);
  return { deployment_objects: objects.rows, work_orders: orders.rows };
}

const metadataStatement = prepared(
  'brokkr_trust_metadata',
  `SELECT coalesce((SELECT jsonb_agg(envelope ORDER BY version) FROM trust_metadata WHERE kind = 'root'), '[]') AS roots,
          (SELECT envelope FROM trust_metadata WHERE kind = 'revocations' ORDER BY version DESC LIMIT 1) AS revocations,
          (SELECT envelope FROM trust_metadata WHERE kind = 'timestamp' ORDER BY version DESC LIMIT 1) AS timestamp`,
);

export async function trustMetadata(db: Queryable): Promise<TrustMetadata> {
  const { rows } = await db.query<TrustMetadata>(metadataStatement([]));
  return rows[0]!;
}

// Timestamps are published often (each expires): only the newest few are kept.
const publishStatement = prepared(
  'brokkr_trust_metadata_publish',
  `WITH up AS (
     INSERT INTO trust_metadata (kind, version, envelope) VALUES ($1, $2, $3)
     ON CONFLICT (kind, version) DO UPDATE SET envelope = excluded.envelope, published_at = now()
     RETURNING kind, version
   ), trimmed AS (
     DELETE FROM trust_metadata t WHERE $1 = 'timestamp' AND t.kind = 'timestamp'
        AND t.version < (SELECT max(version) FROM trust_metadata WHERE kind = 'timestamp') - 10
   )
   SELECT kind, version::float8 AS version FROM up`,
);

export async function publishTrustMetadata(
  db: Queryable,
  kind: TrustMetadataKind,
  version: number,
  envelope: Record<string, unknown>,
): Promise<{ kind: TrustMetadataKind; version: number }> {
  const { rows } = await db.query<{ kind: TrustMetadataKind; version: number }>(
    publishStatement([kind, version, JSON.stringify(envelope)]),
  );
  return rows[0]!;
}

// Whether the stack holds this content already (a signature stored after its content: a re-signing).
const holdsContentStatement = prepared(
  'brokkr_signatures_stack_holds_content',
  `SELECT EXISTS (SELECT 1 FROM deployment_objects WHERE stack_id = $1 AND yaml_checksum = $2 AND deleted_at IS NULL) AS holds`,
);

export async function stackHoldsContent(db: Queryable, stackId: string, contentDigest: string): Promise<boolean> {
  const { rows } = await db.query<{ holds: boolean }>(holdsContentStatement([stackId, contentDigest]));
  return rows[0]!.holds;
}

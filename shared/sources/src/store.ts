import type { Queryable } from '@brokkr/db';
import { sha256Digest } from './digest.ts';
import type { FetchedSource } from './fetched.ts';

export interface SourceBlob {
  digest: string;
  kind: FetchedSource['kind'];
  bytes: Buffer;
  size: number;
  createdAt: Date;
}

/**
 * Keeps the bytes under their digest (migrations/0022_source_blobs.ts). The same content
 * fetched again, or submitted by another tenant, is stored once: the first row stays. The
 * digest is computed again here so a row can never hold bytes that are not its key's.
 */
export async function storeSourceBlob(db: Queryable, fetched: Pick<FetchedSource, 'digest' | 'kind' | 'bytes'>): Promise<void> {
  const digest = sha256Digest(fetched.bytes);
  if (digest !== fetched.digest) throw new Error(`source blob digest ${fetched.digest} does not match its bytes (${digest})`);
  await db.query('INSERT INTO source_blobs (digest, kind, bytes, size) VALUES ($1, $2, $3, $4) ON CONFLICT (digest) DO NOTHING', [
    digest,
    fetched.kind,
    fetched.bytes,
    fetched.bytes.length,
  ]);
}

export async function loadSourceBlob(db: Queryable, digest: string): Promise<SourceBlob | undefined> {
  const { rows } = await db.query<{ digest: string; kind: SourceBlob['kind']; bytes: Buffer; size: number; created_at: Date }>(
    'SELECT digest, kind, bytes, size, created_at FROM source_blobs WHERE digest = $1',
    [digest],
  );
  const row = rows[0];
  return row && { digest: row.digest, kind: row.kind, bytes: row.bytes, size: row.size, createdAt: row.created_at };
}

import { prepared, type Queryable } from '@brokkr/db';

/** A stored render's text (renders: one row per distinct input, keyed by its render key). */
export interface StoredRender {
  key: string;
  yaml_content: string;
  yaml_checksum: string;
}

const storedRendersStatement = prepared(
  'brokkr_stored_renders',
  'SELECT key, yaml_content, yaml_checksum FROM renders WHERE key = ANY($1::text[])',
);

/** The stored renders of these keys (each once): what agents are served, and what a submit checks against grants. */
export async function storedRenders(db: Queryable, keys: readonly string[]): Promise<StoredRender[]> {
  if (keys.length === 0) return [];
  return (await db.query<StoredRender>(storedRendersStatement([keys]))).rows;
}

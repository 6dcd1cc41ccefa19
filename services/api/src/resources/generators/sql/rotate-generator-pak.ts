import type { Queryable } from '@brokkr/db';
import { GENERATOR_COLUMNS, type GeneratorRow } from './generator-row.ts';

const G_COLUMNS = GENERATOR_COLUMNS.split(', ')
  .map((c) => `g.${c}`)
  .join(', ');

/** Sets a new hash and returns the old one (read under the row lock). */
export async function rotateGeneratorPak(
  tx: Queryable,
  id: string,
  newHash: string,
): Promise<{ generator: GeneratorRow; oldHash: string | null } | undefined> {
  const { rows } = await tx.query<GeneratorRow & { old_hash: string | null }>(
    `UPDATE generators g SET pak_hash = $2
       FROM (SELECT id, pak_hash FROM generators WHERE id = $1 FOR UPDATE) old
      WHERE g.id = old.id AND g.deleted_at IS NULL
      RETURNING ${G_COLUMNS}, old.pak_hash AS old_hash`,
    [id, newHash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { old_hash: oldHash, ...generator } = row;
  return { generator, oldHash };
}

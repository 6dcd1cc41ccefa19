import type { Queryable } from '@brokkr/db';
import { GENERATOR_COLUMNS, type GeneratorRow } from './generator-row.ts';

export interface GeneratorUpdate {
  name: string;
  /** null keeps the stored value (Brokkr writes only non-null fields). */
  description: string | null;
  is_active: boolean;
  last_active_at: string | null;
}

const G_COLUMNS = GENERATOR_COLUMNS.split(', ')
  .map((c) => `g.${c}`)
  .join(', ');

/**
 * The updated generator and its PAK hash (a deactivated generator's PAK must stop working at
 * once); undefined when there is no live generator, or when `activeMustBe` is given and the
 * stored is_active differs (checked in the same statement as the write).
 */
export async function updateGenerator(
  tx: Queryable,
  id: string,
  u: GeneratorUpdate,
  activeMustBe?: boolean,
): Promise<{ generator: GeneratorRow; pakHash: string | null } | undefined> {
  const { rows } = await tx.query<GeneratorRow & { pak_hash: string | null }>(
    `UPDATE generators g
        SET name = $2, description = COALESCE($3, description), is_active = $4,
            last_active_at = COALESCE($5::timestamptz, last_active_at)
      WHERE g.id = $1 AND g.deleted_at IS NULL AND ($6::boolean IS NULL OR g.is_active = $6)
      RETURNING ${G_COLUMNS}, g.pak_hash`,
    [id, u.name, u.description, u.is_active, u.last_active_at, activeMustBe ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { pak_hash: pakHash, ...generator } = row;
  return { generator, pakHash };
}

import type { Queryable } from '@brokkr/db';
import { GENERATOR_COLUMNS, type GeneratorRow } from './generator-row.ts';

export interface GeneratorUpdate {
  name: string;
  /** null keeps the stored value (Brokkr writes only non-null fields). */
  description: string | null;
  is_active: boolean;
  last_active_at: string | null;
}

export async function updateGenerator(tx: Queryable, id: string, u: GeneratorUpdate): Promise<GeneratorRow | undefined> {
  const { rows } = await tx.query<GeneratorRow>(
    `UPDATE generators
        SET name = $2, description = COALESCE($3, description), is_active = $4,
            last_active_at = COALESCE($5::timestamptz, last_active_at)
      WHERE id = $1 AND deleted_at IS NULL
      RETURNING ${GENERATOR_COLUMNS}`,
    [id, u.name, u.description, u.is_active, u.last_active_at],
  );
  return rows[0];
}

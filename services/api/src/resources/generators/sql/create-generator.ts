import type { Queryable } from '@brokkr/db';
import { GENERATOR_COLUMNS, type GeneratorRow } from './generator-row.ts';

export async function insertGenerator(
  tx: Queryable,
  g: { name: string; description: string | null; pakHash: string },
): Promise<GeneratorRow> {
  const { rows } = await tx.query<GeneratorRow>(
    `INSERT INTO generators (name, description, pak_hash) VALUES ($1, $2, $3) RETURNING ${GENERATOR_COLUMNS}`,
    [g.name, g.description, g.pakHash],
  );
  return rows[0]!;
}

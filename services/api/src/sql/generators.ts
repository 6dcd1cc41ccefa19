import type { Queryable } from '@brokkr/db';

/** Generator JSON (contract §2.4); pak_hash is never selected into it. */
export interface GeneratorRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  name: string;
  description: string | null;
  last_active_at: Date | null;
  is_active: boolean;
  is_system: boolean;
}

const COLUMNS = 'id, created_at, updated_at, deleted_at, name, description, last_active_at, is_active, is_system';

export async function listTenantGenerators(db: Queryable): Promise<GeneratorRow[]> {
  const { rows } = await db.query<GeneratorRow>(
    `SELECT ${COLUMNS} FROM generators WHERE deleted_at IS NULL AND NOT is_system ORDER BY created_at, id`,
  );
  return rows;
}

export async function findLiveGenerator(db: Queryable, id: string): Promise<GeneratorRow | undefined> {
  const { rows } = await db.query<GeneratorRow>(`SELECT ${COLUMNS} FROM generators WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

export async function insertGenerator(tx: Queryable, g: { name: string; description: string | null; pakHash: string }): Promise<GeneratorRow> {
  const { rows } = await tx.query<GeneratorRow>(
    `INSERT INTO generators (name, description, pak_hash) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [g.name, g.description, g.pakHash],
  );
  return rows[0]!;
}

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
      RETURNING ${COLUMNS}`,
    [id, u.name, u.description, u.is_active, u.last_active_at],
  );
  return rows[0];
}

/**
 * Soft-deletes a generator (the cascade triggers delete its stacks, their objects and its
 * templates) and returns the hash that must stop authenticating. `deleted_at IS NULL` makes a
 * concurrent second delete a no-op.
 */
export async function softDeleteGenerator(tx: Queryable, id: string): Promise<{ pak_hash: string | null } | undefined> {
  const { rows } = await tx.query<{ pak_hash: string | null }>(
    'UPDATE generators SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING pak_hash',
    [id],
  );
  return rows[0];
}

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
      RETURNING ${COLUMNS.split(', ').map((c) => `g.${c}`).join(', ')}, old.pak_hash AS old_hash`,
    [id, newHash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { old_hash: oldHash, ...generator } = row;
  return { generator, oldHash };
}

/** Agents whose target state depends on the generator: registered with it, or targeting its live stacks. */
export async function agentsAffectedByGenerator(tx: Queryable, generatorId: string): Promise<string[]> {
  const { rows } = await tx.query<{ agent_id: string }>(
    `SELECT agent_id FROM agent_generator_registrations WHERE generator_id = $1
     UNION
     SELECT t.agent_id FROM agent_targets t JOIN stacks s ON s.id = t.stack_id
      WHERE s.generator_id = $1 AND s.deleted_at IS NULL`,
    [generatorId],
  );
  return rows.map((r) => r.agent_id);
}

export async function listPakSummaries(db: Queryable): Promise<{ id: string; name: string }[]> {
  const { rows } = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM generators WHERE deleted_at IS NULL AND NOT is_system ORDER BY name, id',
  );
  return rows;
}

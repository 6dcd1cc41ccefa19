import type { Queryable } from '@brokkr/db';

/**
 * Start-up statements. They run inside one transaction that first takes a
 * transaction-scoped advisory lock, so replicas starting together against a fresh database
 * serialise here: the first one initialises, the others find the marker and skip.
 */
const BOOTSTRAP_LOCK_KEY = 'brokkr.api.bootstrap';

export const ADMIN_GENERATOR_NAME = 'admin-generator';
export const ADMIN_GENERATOR_DESCRIPTION = 'Linked to Admin PAK';
export const SYSTEM_GENERATOR_NAME = '__system__';
export const SYSTEM_GENERATOR_DESCRIPTION = 'System generator — reserved for fleet-management stacks';

export async function lockBootstrap(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [BOOTSTRAP_LOCK_KEY]);
}

/** Inserts the first-run marker when there is none; true when this call made it the first run. */
export async function markInitialized(tx: Queryable): Promise<boolean> {
  const { rowCount } = await tx.query(
    'INSERT INTO app_initialization (initialized_at) SELECT now() WHERE NOT EXISTS (SELECT 1 FROM app_initialization)',
  );
  return rowCount === 1;
}

/** Updates the first admin_role row (Brokkr only ever reads the first) or inserts one. */
export async function upsertAdminRole(tx: Queryable, hash: string): Promise<void> {
  const { rowCount } = await tx.query(
    'UPDATE admin_role SET pak_hash = $1 WHERE id = (SELECT id FROM admin_role ORDER BY created_at, id LIMIT 1)',
    [hash],
  );
  if (rowCount === 0) await tx.query('INSERT INTO admin_role (pak_hash) VALUES ($1)', [hash]);
}

export async function upsertAdminGenerator(tx: Queryable, hash: string): Promise<void> {
  const { rowCount } = await tx.query('UPDATE generators SET pak_hash = $1, description = $2 WHERE name = $3 AND deleted_at IS NULL', [
    hash,
    ADMIN_GENERATOR_DESCRIPTION,
    ADMIN_GENERATOR_NAME,
  ]);
  if (rowCount === 0) {
    await tx.query('INSERT INTO generators (name, description, pak_hash) VALUES ($1, $2, $3)', [
      ADMIN_GENERATOR_NAME,
      ADMIN_GENERATOR_DESCRIPTION,
      hash,
    ]);
  }
}

/**
 * Provisions `__system__` when no live system generator exists, then registers every agent
 * (soft-deleted ones included, as Brokkr does) that is not registered with it yet.
 */
export async function provisionSystemGenerator(tx: Queryable): Promise<string> {
  await tx.query(
    `INSERT INTO generators (name, description, is_system)
     SELECT $1, $2, true WHERE NOT EXISTS (SELECT 1 FROM generators WHERE is_system AND deleted_at IS NULL)`,
    [SYSTEM_GENERATOR_NAME, SYSTEM_GENERATOR_DESCRIPTION],
  );
  const { rows } = await tx.query<{ id: string }>(
    'SELECT id FROM generators WHERE is_system AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1',
  );
  const systemId = rows[0]?.id;
  if (!systemId) throw new Error('system generator missing after provisioning');
  await tx.query(
    `INSERT INTO agent_generator_registrations (agent_id, generator_id)
     SELECT a.id, $1 FROM agents a
     ON CONFLICT (agent_id, generator_id) DO NOTHING`,
    [systemId],
  );
  return systemId;
}

export async function storedAdminHash(db: Queryable): Promise<string | undefined> {
  const { rows } = await db.query<{ pak_hash: string }>('SELECT pak_hash FROM admin_role ORDER BY created_at, id LIMIT 1');
  return rows[0]?.pak_hash;
}

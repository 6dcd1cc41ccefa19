import { timingSafeEqual } from 'node:crypto';
import { prepared, type Queryable } from '@brokkr/db';
import { adminIdentity, agentIdentity, generatorIdentity, type Identity } from '../identity.ts';

/**
 * One round trip for the whole middleware order (admin → agent → generator). The first
 * admin_role row's hash is returned as is and compared in constant time in JS; agent and
 * generator rows are found by their (partial) pak_hash indexes. A generator an admin deactivated
 * (is_active = false) does not authenticate (docs/security.md, "Deactivation"); an INACTIVE agent
 * does, so it can heartbeat, and gets an empty target state.
 */
const RESOLVE_SQL = `
(SELECT 'admin' AS kind, NULL::uuid AS id, pak_hash FROM admin_role ORDER BY created_at, id LIMIT 1)
UNION ALL
(SELECT 'agent', id, NULL FROM agents WHERE pak_hash = $1 AND deleted_at IS NULL LIMIT 1)
UNION ALL
(SELECT 'generator', id, NULL FROM generators WHERE pak_hash = $1 AND deleted_at IS NULL AND is_active LIMIT 1)`;

// Prepared: it runs on every authenticated request.
const resolveStatement = prepared('brokkr_resolve_pak', RESOLVE_SQL);

interface Row {
  kind: 'admin' | 'agent' | 'generator';
  id: string | null;
  pak_hash: string | null;
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

export async function resolvePakHash(db: Queryable, hash: string): Promise<Identity | undefined> {
  const { rows } = await db.query<Row>(resolveStatement([hash]));
  const admin = rows.find((r) => r.kind === 'admin');
  if (admin?.pak_hash && sameHash(admin.pak_hash, hash)) return adminIdentity();
  const agent = rows.find((r) => r.kind === 'agent');
  if (agent?.id) return agentIdentity(agent.id);
  const generator = rows.find((r) => r.kind === 'generator');
  if (generator?.id) return generatorIdentity(generator.id);
  return undefined;
}

/**
 * The same rule for many hashes in one round trip (auth/shared-lookups.ts batches them): the first
 * admin_role row's hash, compared in constant time with each, and the agents and generators found by
 * their pak_hash indexes. A hash that matches nobody is absent from the map.
 */
const RESOLVE_MANY_SQL = `
(SELECT 'admin' AS kind, NULL::uuid AS id, pak_hash FROM admin_role ORDER BY created_at, id LIMIT 1)
UNION ALL
SELECT 'agent', id, pak_hash FROM agents WHERE pak_hash = ANY($1::text[]) AND deleted_at IS NULL
UNION ALL
SELECT 'generator', id, pak_hash FROM generators WHERE pak_hash = ANY($1::text[]) AND deleted_at IS NULL AND is_active`;

const resolveManyStatement = prepared('brokkr_resolve_paks', RESOLVE_MANY_SQL);

export async function resolvePakHashes(db: Queryable, hashes: readonly string[]): Promise<Map<string, Identity>> {
  const { rows } = await db.query<Row>(resolveManyStatement([hashes]));
  const found = new Map<string, Identity>();
  // Generators first, so an agent wins a (never seen) shared hash, as the single lookup's order has it.
  for (const row of rows.filter((r) => r.kind === 'generator'))
    if (row.id && row.pak_hash) found.set(row.pak_hash, generatorIdentity(row.id));
  for (const row of rows.filter((r) => r.kind === 'agent')) if (row.id && row.pak_hash) found.set(row.pak_hash, agentIdentity(row.id));
  const admin = rows.find((r) => r.kind === 'admin')?.pak_hash;
  if (admin) for (const hash of hashes) if (sameHash(admin, hash)) found.set(hash, adminIdentity());
  return found;
}

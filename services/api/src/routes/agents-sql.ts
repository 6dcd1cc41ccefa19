import type { Queryable } from '@brokkr/db';
import { SYSTEM_GENERATOR_NAME } from '../bootstrap/sql/first-start.ts';

/** An agents row as the API serializes it (never pak_hash). */
export interface AgentRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  name: string;
  cluster_name: string;
  last_heartbeat: Date | null;
  status: string;
  k8s_reachable: boolean | null;
  k8s_api_latency_ms: number | null;
  k8s_reported_at: Date | null;
}

const COLUMNS = `id, created_at, updated_at, deleted_at, name, cluster_name, last_heartbeat, status,
  k8s_reachable, k8s_api_latency_ms, k8s_reported_at`;
const A_COLUMNS = COLUMNS.split(',')
  .map((c) => `a.${c.trim()}`)
  .join(', ');

export async function listAgents(db: Queryable): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(`SELECT ${COLUMNS} FROM agents WHERE deleted_at IS NULL ORDER BY created_at, id`);
  return rows;
}

/** A generator's tenant view: the live agents registered with it. */
export async function listAgentsOfGenerator(db: Queryable, generatorId: string): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${A_COLUMNS} FROM agents a
       JOIN agent_generator_registrations r ON r.agent_id = a.id AND r.generator_id = $1
      WHERE a.deleted_at IS NULL ORDER BY a.created_at, a.id`,
    [generatorId],
  );
  return rows;
}

export async function findGenerator(db: Queryable, generatorId: string): Promise<{ is_system: boolean } | undefined> {
  const { rows } = await db.query<{ is_system: boolean }>('SELECT is_system FROM generators WHERE id = $1 AND deleted_at IS NULL', [
    generatorId,
  ]);
  return rows[0];
}

export async function findAgent(db: Queryable, id: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(`SELECT ${COLUMNS} FROM agents WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

export async function findAgentByName(db: Queryable, name: string, clusterName: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${COLUMNS} FROM agents WHERE name = $1 AND cluster_name = $2 AND deleted_at IS NULL`,
    [name, clusterName],
  );
  return rows[0];
}

/** The ids among `ids` that name no live generator. */
export async function unknownGeneratorIds(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT x.id FROM unnest($1::uuid[]) AS x(id)
      WHERE NOT EXISTS (SELECT 1 FROM generators g WHERE g.id = x.id AND g.deleted_at IS NULL)`,
    [ids],
  );
  return rows.map((r) => r.id);
}

export async function insertAgent(tx: Queryable, input: { name: string; clusterName: string; pakHash: string }): Promise<AgentRow> {
  const { rows } = await tx.query<AgentRow>(
    `INSERT INTO agents (name, cluster_name, pak_hash) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [input.name, input.clusterName, input.pakHash],
  );
  return rows[0]!;
}

/** Registers the agent with the live system generator and with `generatorIds`, in one statement. */
export async function registerAgent(tx: Queryable, agentId: string, generatorIds: readonly string[]): Promise<void> {
  await tx.query(
    `INSERT INTO agent_generator_registrations (agent_id, generator_id)
     SELECT $1, g.id FROM generators g
      WHERE g.deleted_at IS NULL AND ((g.is_system AND g.name = $3) OR g.id = ANY($2::uuid[]))
     ON CONFLICT (agent_id, generator_id) DO NOTHING`,
    [agentId, generatorIds, SYSTEM_GENERATOR_NAME],
  );
}

export interface AgentChanges {
  name?: string;
  cluster_name?: string;
  status?: string;
}

export async function updateAgent(tx: Queryable, id: string, changes: AgentChanges): Promise<AgentRow | undefined> {
  const { rows } = await tx.query<AgentRow>(
    `UPDATE agents SET name = COALESCE($2, name), cluster_name = COALESCE($3, cluster_name), status = COALESCE($4, status)
      WHERE id = $1 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
    [id, changes.name ?? null, changes.cluster_name ?? null, changes.status ?? null],
  );
  return rows[0];
}

/** Soft delete (the trigger retires the agent's events); undefined when there was nothing to delete. */
export async function softDeleteAgent(tx: Queryable, id: string): Promise<{ deleted_at: Date; pak_hash: string } | undefined> {
  const { rows } = await tx.query<{ deleted_at: Date; pak_hash: string }>(
    'UPDATE agents SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at, pak_hash',
    [id],
  );
  return rows[0];
}

/** Swaps the PAK hash; returns the agent and the hash that must stop working. */
export async function rotateAgentPak(tx: Queryable, id: string, newHash: string): Promise<{ agent: AgentRow; oldHash: string } | undefined> {
  const { rows } = await tx.query<AgentRow & { old_hash: string }>(
    `WITH old AS (SELECT id, pak_hash FROM agents WHERE id = $1 AND deleted_at IS NULL FOR UPDATE)
     UPDATE agents a SET pak_hash = $2 FROM old WHERE a.id = old.id
     RETURNING ${A_COLUMNS}, old.pak_hash AS old_hash`,
    [id, newHash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { old_hash: oldHash, ...agent } = row;
  return { agent, oldHash };
}

export interface K8sReport {
  reachable: boolean;
  latencyMs: number | null;
}

export async function recordHeartbeat(db: Queryable, id: string, k8s: K8sReport | undefined): Promise<void> {
  if (!k8s) {
    await db.query('UPDATE agents SET last_heartbeat = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
    return;
  }
  await db.query(
    `UPDATE agents SET last_heartbeat = now(), k8s_reachable = $2, k8s_api_latency_ms = $3, k8s_reported_at = now()
      WHERE id = $1 AND deleted_at IS NULL`,
    [id, k8s.reachable, k8s.latencyMs],
  );
}

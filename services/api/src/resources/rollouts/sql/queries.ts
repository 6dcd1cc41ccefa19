import type { Queryable } from '@brokkr/db';
import { ROLLOUT_COLUMNS, type PolicyRow, type RolloutRow } from './rollout-row.ts';
import { APPROVAL_COLUMNS, type ApprovalRow } from './approval-row.ts';

export async function findPolicy(db: Queryable, stackId: string): Promise<PolicyRow | undefined> {
  const { rows } = await db.query<PolicyRow>('SELECT stack_id, policy, created_at, updated_at FROM rollout_policies WHERE stack_id = $1', [
    stackId,
  ]);
  return rows[0];
}

export async function findRollout(db: Queryable, id: string, lock = false): Promise<RolloutRow | undefined> {
  const { rows } = await db.query<RolloutRow>(`SELECT ${ROLLOUT_COLUMNS} FROM rollouts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

/** A stack's rollouts, newest first (bounded: a stack rolls out once per deployment object). */
export async function listStackRollouts(db: Queryable, stackId: string, limit: number): Promise<RolloutRow[]> {
  const { rows } = await db.query<RolloutRow>(
    `SELECT ${ROLLOUT_COLUMNS} FROM rollouts WHERE stack_id = $1 ORDER BY created_at DESC LIMIT $2`,
    [stackId, limit],
  );
  return rows;
}

export interface WaveCounts {
  rollout_id: string;
  wave: number;
  agents: number;
  applied: number;
  healthy: number;
  failed: number;
}

/**
 * Per wave, what its agents reported for the rollout's object: the same reading as the gate in
 * maintenance (services/maintenance/src/rollouts/gate.ts), counted.
 */
export async function waveCounts(db: Queryable, rolloutIds: readonly string[]): Promise<WaveCounts[]> {
  if (rolloutIds.length === 0) return [];
  const { rows } = await db.query<WaveCounts>(
    `SELECT x.rollout_id, x.wave, count(*)::int AS agents,
            count(*) FILTER (WHERE x.last_event = 'SUCCESS')::int AS applied,
            count(*) FILTER (WHERE x.last_event = 'SUCCESS' AND coalesce(x.health, '') NOT IN ('failing', 'degraded'))::int AS healthy,
            count(*) FILTER (WHERE x.last_event = 'FAILURE' OR x.health = 'failing')::int AS failed
       FROM (
         SELECT ra.rollout_id, ra.wave,
                (SELECT upper(e.status) FROM agent_events e
                  WHERE e.agent_id = ra.agent_id AND e.deployment_object_id = r.deployment_object_id AND e.deleted_at IS NULL
                  ORDER BY e.created_at DESC LIMIT 1) AS last_event,
                (SELECT h.status FROM deployment_health h
                  WHERE h.agent_id = ra.agent_id AND h.deployment_object_id = r.deployment_object_id) AS health
           FROM rollout_agents ra JOIN rollouts r ON r.id = ra.rollout_id
          WHERE ra.rollout_id = ANY($1::uuid[])
       ) x
      GROUP BY x.rollout_id, x.wave`,
    [rolloutIds],
  );
  return rows;
}

/** The agents assigned to a rollout (whom a transition that changes what they are served must wake). */
export async function rolloutAgentIds(db: Queryable, id: string): Promise<string[]> {
  const { rows } = await db.query<{ agent_id: string }>('SELECT agent_id FROM rollout_agents WHERE rollout_id = $1', [id]);
  return rows.map((r) => r.agent_id);
}

/** The generator owning a stack (deleted or not). */
export async function stackGenerator(db: Queryable, stackId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ generator_id: string }>('SELECT generator_id FROM stacks WHERE id = $1', [stackId]);
  return rows[0]?.generator_id;
}

export interface FleetRolloutRow extends RolloutRow {
  stack_name: string;
}

/**
 * Rollouts across the fleet, newest first: every live stack's (generatorId null) or one
 * generator's stacks', optionally only those in `statuses`.
 */
export async function listFleetRollouts(
  db: Queryable,
  filter: { generatorId: string | null; statuses: readonly string[] | null; limit: number },
): Promise<FleetRolloutRow[]> {
  const columns = ROLLOUT_COLUMNS.split(', ')
    .map((c) => `r.${c}`)
    .join(', ');
  const { rows } = await db.query<FleetRolloutRow>(
    `SELECT ${columns}, s.name AS stack_name
       FROM rollouts r JOIN stacks s ON s.id = r.stack_id AND s.deleted_at IS NULL
      WHERE ($1::uuid IS NULL OR s.generator_id = $1)
        AND ($2::text[] IS NULL OR r.status = ANY($2::text[]))
      ORDER BY r.created_at DESC, r.id
      LIMIT $3`,
    [filter.generatorId, filter.statuses, filter.limit],
  );
  return rows;
}

/** What a rollout's waves would ship now (migration 0029: the object's checksum and the stack's layers revision). */
export async function rolloutDigest(db: Queryable, id: string): Promise<string> {
  const { rows } = await db.query<{ digest: string }>('SELECT brokkr_rollout_digest($1) AS digest', [id]);
  return rows[0]!.digest;
}

export interface ApprovalCount {
  rollout_id: string;
  wave: number;
  approvals: number;
}

/** Per rollout and wave, the approvals that count: unexpired, of the digest the rollout would ship now. */
export async function approvalCounts(db: Queryable, rolloutIds: readonly string[]): Promise<ApprovalCount[]> {
  if (rolloutIds.length === 0) return [];
  const { rows } = await db.query<ApprovalCount>(
    `SELECT a.rollout_id, a.wave, count(*)::int AS approvals
       FROM rollout_approvals a
      WHERE a.rollout_id = ANY($1::uuid[]) AND a.expires_at > now() AND a.digest = brokkr_rollout_digest(a.rollout_id)
      GROUP BY a.rollout_id, a.wave`,
    [rolloutIds],
  );
  return rows;
}

/** A wave's approvals, every one (expired and voided too), newest first. */
export async function listWaveApprovals(db: Queryable, id: string, wave: number): Promise<ApprovalRow[]> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${APPROVAL_COLUMNS} FROM rollout_approvals WHERE rollout_id = $1 AND wave = $2 ORDER BY created_at DESC, id LIMIT 200`,
    [id, wave],
  );
  return rows;
}

/**
 * Who submitted the rollout's object: deployment_objects.submitted_by ('admin' or a generator id),
 * or, for an object stored before it was recorded, the stack's owner (only the owner or an admin
 * can submit; the owner is the one a four-eyes rule must keep out).
 */
export async function rolloutSubmitter(db: Queryable, id: string): Promise<string> {
  const { rows } = await db.query<{ submitter: string }>(
    `SELECT coalesce(o.submitted_by, s.generator_id::text) AS submitter
       FROM rollouts r JOIN deployment_objects o ON o.id = r.deployment_object_id JOIN stacks s ON s.id = r.stack_id
      WHERE r.id = $1`,
    [id],
  );
  return rows[0]!.submitter;
}

/** The agents of one wave of a rollout (whom its release wakes). */
export async function waveAgentIds(db: Queryable, id: string, wave: number): Promise<string[]> {
  const { rows } = await db.query<{ agent_id: string }>('SELECT agent_id FROM rollout_agents WHERE rollout_id = $1 AND wave = $2', [
    id,
    wave,
  ]);
  return rows.map((r) => r.agent_id);
}

export interface ApprovableRolloutRow extends RolloutRow {
  stack_name: string;
  digest: string;
  submitter: string;
}

/**
 * Open rollouts (pending, progressing, paused) of live stacks with a wave `approver` may approve
 * (null: an admin, every wave that needs approvals), newest first, with what they would ship and
 * who submitted it (the same fallback as rolloutSubmitter).
 */
export async function listApprovableRollouts(db: Queryable, approver: string | null, limit: number): Promise<ApprovableRolloutRow[]> {
  const columns = ROLLOUT_COLUMNS.split(', ')
    .map((c) => `r.${c}`)
    .join(', ');
  const { rows } = await db.query<ApprovableRolloutRow>(
    `SELECT ${columns}, s.name AS stack_name, brokkr_rollout_digest(r.id) AS digest,
            coalesce(o.submitted_by, s.generator_id::text) AS submitter
       FROM rollouts r
       JOIN stacks s ON s.id = r.stack_id AND s.deleted_at IS NULL
       JOIN deployment_objects o ON o.id = r.deployment_object_id
      WHERE r.status IN ('pending', 'progressing', 'paused')
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(r.policy->'waves') w
                     WHERE coalesce((w->>'required_approvals')::int, 0) > 0
                       AND ($1::text IS NULL OR coalesce(w->'approvers', '[]'::jsonb) ? $1::text))
      ORDER BY r.created_at DESC, r.id
      LIMIT $2`,
    [approver, limit],
  );
  return rows;
}

/** The ids among `ids` that are no live generator (an approver must be one; the system generator is none). */
export async function unknownGenerators(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT x.id FROM unnest($1::uuid[]) AS x(id)
      WHERE NOT EXISTS (SELECT 1 FROM generators g WHERE g.id = x.id AND g.deleted_at IS NULL AND NOT g.is_system)
      ORDER BY x.id`,
    [ids],
  );
  return rows.map((r) => r.id);
}

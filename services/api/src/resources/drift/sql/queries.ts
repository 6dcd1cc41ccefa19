import type { Queryable } from '@brokkr/db';
import type { DriftGrouping, DriftState } from '@brokkr/contracts';
import { associationPairs } from '../../../domain/association.ts';
import { DRIFT_COLUMNS, DRIFT_JOINS, type DriftRow } from './drift-row.ts';
import type { DriftPolicyRow } from './policy-row.ts';

/** What a read may narrow the records to; `generatorId` is who reads (undefined: an admin, every stack). */
export interface DriftFilter {
  generatorId?: string;
  stackId?: string;
  agentId?: string;
  states?: readonly DriftState[];
  /** Seen at or after (last_seen). */
  since?: string;
  /** First seen before. */
  until?: string;
  kind?: string;
  /** Records with drift at this JSON pointer. */
  path?: string;
  manager?: string;
}

/** The WHERE clause of a filter over `r` (drift_records) and `s` (stacks), with its parameters after `first`. */
function where(f: DriftFilter, values: unknown[]): string {
  const conditions: string[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(sql(`$${values.length}`));
  };
  if (f.generatorId !== undefined) add((n) => `s.generator_id = ${n}::uuid`, f.generatorId);
  if (f.stackId !== undefined) add((n) => `r.stack_id = ${n}::uuid`, f.stackId);
  if (f.agentId !== undefined) add((n) => `r.agent_id = ${n}::uuid`, f.agentId);
  if (f.states?.length) add((n) => `r.state = ANY(${n}::text[])`, f.states);
  if (f.since !== undefined) add((n) => `r.last_seen >= ${n}::timestamptz`, f.since);
  if (f.until !== undefined) add((n) => `r.first_seen < ${n}::timestamptz`, f.until);
  if (f.kind !== undefined) add((n) => `r.kind = ${n}`, f.kind);
  if (f.path !== undefined) add((n) => `${n} = ANY(r.paths)`, f.path);
  if (f.manager !== undefined) add((n) => `${n} = ANY(r.managers)`, f.manager);
  return conditions.length ? conditions.join(' AND ') : 'true';
}

/** Where the previous page ended: its last record's first_seen (to the microsecond) and id. */
export interface PageKey {
  firstSeen: string;
  id: string;
}

/**
 * One page, newest first, keyed on (first_seen, id): neither changes after the record is made, so
 * paging on returns every record exactly once however reports move last_seen meanwhile.
 */
export async function listDrift(db: Queryable, filter: DriftFilter, after: PageKey | undefined, limit: number): Promise<DriftRow[]> {
  const values: unknown[] = [];
  let condition = where(filter, values);
  if (after) {
    values.push(after.firstSeen, after.id);
    condition += ` AND (r.first_seen, r.id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`;
  }
  values.push(limit);
  const { rows } = await db.query<DriftRow>(
    `SELECT ${DRIFT_COLUMNS} FROM drift_records r ${DRIFT_JOINS}
      WHERE ${condition}
      ORDER BY r.first_seen DESC, r.id DESC
      LIMIT $${values.length}`,
    values,
  );
  return rows;
}

export async function findDrift(db: Queryable, id: string, lock = false): Promise<(DriftRow & { generator_id: string }) | undefined> {
  const { rows } = await db.query<DriftRow & { generator_id: string }>(
    `SELECT ${DRIFT_COLUMNS}, s.generator_id FROM drift_records r ${DRIFT_JOINS} WHERE r.id = $1${lock ? ' FOR UPDATE OF r' : ''}`,
    [id],
  );
  return rows[0];
}

/** The group key (and the ids it stands for) of each grouping, over `r` and the unnested `x(path, manager)`. */
const GROUP_KEYS: Record<DriftGrouping, { key: string; stack: string; agent: string }> = {
  field: { key: 'x.path', stack: 'NULL::uuid', agent: 'NULL::uuid' },
  manager: { key: "coalesce(x.manager, '')", stack: 'NULL::uuid', agent: 'NULL::uuid' },
  agent: { key: 'r.agent_id::text', stack: 'NULL::uuid', agent: 'r.agent_id' },
  stack: { key: 'r.stack_id::text', stack: 'r.stack_id', agent: 'NULL::uuid' },
  kind: { key: 'r.kind', stack: 'NULL::uuid', agent: 'NULL::uuid' },
  stack_agent: { key: "r.stack_id::text || '/' || r.agent_id::text", stack: 'r.stack_id', agent: 'r.agent_id' },
};

export interface GroupRow {
  key: string;
  label: string | null;
  stack_id: string | null;
  agent_id: string | null;
  records: number;
  agents: number;
  stacks: number;
  managers: { manager: string | null; records: number }[];
}

/**
 * Records grouped by field, manager, agent, stack, kind or stack × agent, largest first, each
 * with its most frequent managers. A deleted object counts under the path '' (the whole
 * document, in RFC 6901). Every record is unnested into (path, manager) pairs once; the counts
 * are distinct records, agents and stacks.
 */
export async function groupDrift(db: Queryable, filter: DriftFilter, by: DriftGrouping, limit: number): Promise<GroupRow[]> {
  const values: unknown[] = [];
  const condition = where(filter, values);
  values.push(limit);
  const g = GROUP_KEYS[by];
  const { rows } = await db.query<GroupRow>(
    `WITH pairs AS MATERIALIZED (
       SELECT r.id, r.agent_id, r.stack_id, ${g.key} AS key, ${g.stack} AS g_stack, ${g.agent} AS g_agent, x.manager
         FROM drift_records r JOIN stacks s ON s.id = r.stack_id
        CROSS JOIN LATERAL unnest(CASE WHEN r.missing OR cardinality(r.paths) = 0 THEN ARRAY[''] ELSE r.paths END,
                                  CASE WHEN r.missing OR cardinality(r.paths) = 0 THEN ARRAY[NULL]::text[] ELSE r.managers END) AS x(path, manager)
        WHERE ${condition}
     ), groups AS (
       SELECT key, min(g_stack::text)::uuid AS stack_id, min(g_agent::text)::uuid AS agent_id, count(DISTINCT id)::int AS records,
              count(DISTINCT agent_id)::int AS agents, count(DISTINCT stack_id)::int AS stacks
         FROM pairs GROUP BY key ORDER BY records DESC, key LIMIT $${values.length}
     ), managers AS (
       SELECT p.key, p.manager, count(DISTINCT p.id)::int AS records,
              row_number() OVER (PARTITION BY p.key ORDER BY count(DISTINCT p.id) DESC, p.manager) AS rank
         FROM pairs p JOIN groups g ON g.key = p.key GROUP BY p.key, p.manager
     )
     SELECT g.key, g.stack_id, g.agent_id, g.records, g.agents, g.stacks,
            CASE WHEN g.agent_id IS NOT NULL AND g.stack_id IS NOT NULL THEN st.name || ' @ ' || a.name
                 WHEN g.agent_id IS NOT NULL THEN a.name || ' (' || a.cluster_name || ')'
                 WHEN g.stack_id IS NOT NULL THEN st.name END AS label,
            coalesce((SELECT jsonb_agg(jsonb_build_object('manager', m.manager, 'records', m.records) ORDER BY m.rank)
                        FROM managers m WHERE m.key = g.key AND m.rank <= 5), '[]') AS managers
       FROM groups g
       LEFT JOIN agents a ON a.id = g.agent_id
       LEFT JOIN stacks st ON st.id = g.stack_id
      ORDER BY g.records DESC, g.key`,
    values,
  );
  return rows;
}

/** Records and distinct agents matching the filter. */
export async function countDrift(db: Queryable, filter: DriftFilter): Promise<{ records: number; agents: number }> {
  const values: unknown[] = [];
  const condition = where(filter, values);
  const { rows } = await db.query<{ records: number; agents: number }>(
    `SELECT count(*)::int AS records, count(DISTINCT r.agent_id)::int AS agents
       FROM drift_records r JOIN stacks s ON s.id = r.stack_id WHERE ${condition}`,
    values,
  );
  return rows[0]!;
}

/**
 * The "of N clusters": the active agents the stack is served to; without a stack, those serving any
 * of the generator's stacks, or every live agent for an admin.
 */
export async function agentsTotal(db: Queryable, filter: DriftFilter): Promise<number> {
  if (filter.agentId !== undefined) return 1;
  const { rows } = await (filter.stackId !== undefined
    ? db.query<{ n: number }>('SELECT count(*)::int AS n FROM brokkr_stack_agents($1::uuid)', [filter.stackId])
    : filter.generatorId !== undefined
      ? db.query<{ n: number }>(
          `SELECT count(DISTINCT x.agent_id)::int AS n
             FROM stacks s CROSS JOIN LATERAL brokkr_stack_agents(s.id) x
            WHERE s.generator_id = $1::uuid AND s.deleted_at IS NULL`,
          [filter.generatorId],
        )
      : db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agents WHERE deleted_at IS NULL AND status = 'ACTIVE'`));
  return rows[0]!.n;
}

/** The stacks this agent is served (the association rule; deleted stacks count while their marker is). */
export async function stacksServedTo(db: Queryable, agentId: string): Promise<Set<string>> {
  const { rows } = await db.query<{ stack_id: string }>(
    `WITH agent AS (SELECT id FROM agents WHERE id = $1 AND deleted_at IS NULL)
     SELECT DISTINCT p.stack_id FROM (${associationPairs('agent')}) p`,
    [agentId],
  );
  return new Set(rows.map((r) => r.stack_id));
}

export async function findDriftPolicy(db: Queryable, stackId: string): Promise<DriftPolicyRow | undefined> {
  const { rows } = await db.query<DriftPolicyRow>(
    'SELECT stack_id, policy, created_at, updated_at FROM stack_drift_policies WHERE stack_id = $1',
    [stackId],
  );
  return rows[0];
}

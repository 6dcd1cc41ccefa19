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

const PATHS = `CASE WHEN r.missing OR cardinality(r.paths) = 0 THEN ARRAY[''] ELSE r.paths END`;
const MANAGERS = `CASE WHEN r.missing OR cardinality(r.paths) = 0 THEN ARRAY[NULL]::text[] ELSE r.managers END`;
/** A record's distinct managers, `first` on one of them; a lateral subquery, so the planner memoizes it per distinct array. */
const DISTINCT_MANAGERS = `(SELECT d.m AS manager, row_number() OVER () = 1 AS first FROM (SELECT DISTINCT m FROM unnest(${MANAGERS}) m) d) x`;

/**
 * How each grouping unnests a record: into its (path, manager) fields for `field` (a record holds
 * a path once), else into its distinct managers; `counted` marks the one row per record that
 * counts it where a record is the unit (the others only say who wrote what).
 */
const GROUPINGS: Record<DriftGrouping, { key: string; unnest: string; counted: string }> = {
  field: { key: 'x.path', unnest: `unnest(${PATHS}, ${MANAGERS}) x(path, manager)`, counted: 'true' },
  manager: { key: "coalesce(x.manager, '')", unnest: DISTINCT_MANAGERS, counted: 'true' },
  agent: { key: 'r.agent_id::text', unnest: DISTINCT_MANAGERS, counted: 'x.first' },
  stack: { key: 'r.stack_id::text', unnest: DISTINCT_MANAGERS, counted: 'x.first' },
  kind: { key: 'r.kind', unnest: DISTINCT_MANAGERS, counted: 'x.first' },
  stack_agent: {
    key: "r.stack_id::text || '/' || r.agent_id::text",
    unnest: DISTINCT_MANAGERS,
    counted: 'x.first',
  },
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

/** One row of the grouping sets: the key alone (its records), or the key with one agent, one stack or one manager. */
interface SetRow {
  key: string;
  agent_id: string | null;
  stack_id: string | null;
  manager: string | null;
  by_agent: boolean;
  by_stack: boolean;
  by_manager: boolean;
  records: number;
  fields: number;
}

/**
 * One scan of the matching records, unnested and hash-aggregated by four grouping sets at once —
 * the key; the key and agent; the key and stack; the key and manager — of which only the `limit`
 * largest keys come back. Distinct agents and stacks are the rows of their sets, so no count
 * DISTINCT sorts anything (docs/perf/2026-11-28-drift-records.md).
 */
function groupSql(by: DriftGrouping, condition: string, limitParam: string): string {
  const g = GROUPINGS[by];
  return `
WITH sets AS (
  SELECT ${g.key} AS key, r.agent_id, r.stack_id, x.manager,
         GROUPING(r.agent_id) = 0 AS by_agent, GROUPING(r.stack_id) = 0 AS by_stack, GROUPING(x.manager) = 0 AS by_manager,
         (count(*) FILTER (WHERE ${g.counted}))::int AS records, count(*)::int AS fields
    FROM drift_records r JOIN stacks s ON s.id = r.stack_id
   CROSS JOIN LATERAL ${g.unnest}
   WHERE ${condition}
   GROUP BY GROUPING SETS ((${g.key}), (${g.key}, r.agent_id), (${g.key}, r.stack_id), (${g.key}, x.manager))
), top AS (
  SELECT key FROM sets WHERE NOT (by_agent OR by_stack OR by_manager) ORDER BY records DESC, key LIMIT ${limitParam}
)
SELECT sets.* FROM sets JOIN top USING (key)`;
}

/** The groups from their set rows, largest first, each with its five most frequent managers. */
function assemble(rows: readonly SetRow[]): GroupRow[] {
  const groups = new Map<string, GroupRow>();
  const group = (key: string) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, label: null, stack_id: null, agent_id: null, records: 0, agents: 0, stacks: 0, managers: [] }));
    return g;
  };
  for (const row of rows) {
    const g = group(row.key);
    if (row.by_agent) g.agents++;
    else if (row.by_stack) g.stacks++;
    else if (row.by_manager) g.managers.push({ manager: row.manager, records: row.fields });
    else g.records = row.records;
  }
  for (const g of groups.values()) {
    g.managers.sort((a, b) => b.records - a.records || String(a.manager).localeCompare(String(b.manager)));
    g.managers = g.managers.slice(0, 5);
  }
  return [...groups.values()].sort((a, b) => b.records - a.records || a.key.localeCompare(b.key));
}

/** The ids a key stands for: an agent, a stack, or both. */
function idsOf(by: DriftGrouping, g: GroupRow): void {
  if (by === 'agent') g.agent_id = g.key;
  if (by === 'stack') g.stack_id = g.key;
  if (by === 'stack_agent') [g.stack_id, g.agent_id] = g.key.split('/') as [string, string];
}

const present = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];

/** The names to show for the ids: an agent with its cluster, a stack, or "stack @ agent". */
async function name(db: Queryable, by: DriftGrouping, groups: GroupRow[]): Promise<GroupRow[]> {
  for (const g of groups) idsOf(by, g);
  const agentIds = present(groups.map((g) => g.agent_id));
  const stackIds = present(groups.map((g) => g.stack_id));
  if (!agentIds.length && !stackIds.length) return groups;
  const { rows } = await db.query<{ id: string; name: string; kind: 'agent' | 'stack' }>(
    `SELECT id::text, name || ' (' || cluster_name || ')' AS name, 'agent' AS kind FROM agents WHERE id = ANY($1::uuid[])
     UNION ALL SELECT id::text, name, 'stack' FROM stacks WHERE id = ANY($2::uuid[])`,
    [agentIds, stackIds],
  );
  const names = new Map(rows.map((r) => [`${r.kind}:${r.id}`, r.name]));
  for (const g of groups) {
    const agent = names.get(`agent:${g.agent_id}`) ?? g.agent_id;
    const stack = names.get(`stack:${g.stack_id}`) ?? g.stack_id;
    g.label = by === 'stack_agent' ? `${stack} @ ${agent}` : (agent ?? stack);
  }
  return groups;
}

/**
 * Records grouped by field, manager, agent, stack, kind or stack × agent, largest first, each
 * with its distinct agents and stacks and its most frequent managers. A deleted object counts
 * under the path '' (the whole document, in RFC 6901).
 */
export async function groupDrift(db: Queryable, filter: DriftFilter, by: DriftGrouping, limit: number): Promise<GroupRow[]> {
  const values: unknown[] = [];
  const condition = where(filter, values);
  values.push(limit);
  const { rows } = await db.query<SetRow>(groupSql(by, condition, `$${values.length}`), values);
  return name(db, by, assemble(rows));
}

/** Records and distinct agents matching the filter (hash-aggregated per agent first: no count DISTINCT). */
export async function countDrift(db: Queryable, filter: DriftFilter): Promise<{ records: number; agents: number }> {
  const values: unknown[] = [];
  const condition = where(filter, values);
  const { rows } = await db.query<{ records: number; agents: number }>(
    `SELECT coalesce(sum(n), 0)::int AS records, count(*)::int AS agents
       FROM (SELECT r.agent_id, count(*) AS n FROM drift_records r JOIN stacks s ON s.id = r.stack_id WHERE ${condition} GROUP BY r.agent_id) x`,
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

import type { Db, Queryable } from '@brokkr/db';
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

/** One state is an equality, which the partial index of the open records matches; several, a list. */
function stateFilter(states: readonly DriftState[] | undefined): [unknown, (n: string) => string] {
  if (!states?.length) return [undefined, () => ''];
  return states.length === 1 ? [states[0], (n) => `r.state = ${n}`] : [states, (n) => `r.state = ANY(${n}::text[])`];
}

/** The WHERE clause of a filter over `r` (drift_records) and `s` (stacks); its parameters are appended to `values`. */
function where(f: DriftFilter, values: unknown[]): string {
  const parts: [unknown, (n: string) => string][] = [
    [f.generatorId, (n) => `s.generator_id = ${n}::uuid`],
    [f.stackId, (n) => `r.stack_id = ${n}::uuid`],
    [f.agentId, (n) => `r.agent_id = ${n}::uuid`],
    stateFilter(f.states),
    [f.since, (n) => `r.last_seen >= ${n}::timestamptz`],
    [f.until, (n) => `r.first_seen < ${n}::timestamptz`],
    [f.kind, (n) => `r.kind = ${n}`],
    [f.path, (n) => `${n} = ANY(r.paths)`],
    [f.manager, (n) => `${n} = ANY(r.managers)`],
  ];
  const conditions: string[] = [];
  for (const [value, sql] of parts) {
    if (value === undefined) continue;
    values.push(value);
    conditions.push(sql(`$${values.length}`));
  }
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

const GROUPING_WORK_MEM = '64MB';

const PATHS = `CASE WHEN r.missing OR cardinality(r.paths) = 0 THEN ARRAY[''] ELSE r.paths END`;
const MANAGERS = `CASE WHEN r.missing OR cardinality(r.paths) = 0 THEN ARRAY[NULL]::text[] ELSE r.managers END`;
/** A record's distinct managers, `first` on one of them; a lateral subquery, so the planner memoizes it per distinct array. */
const DISTINCT_MANAGERS = `(SELECT d.m AS manager, row_number() OVER () = 1 AS first FROM (SELECT DISTINCT m FROM unnest(${MANAGERS}) m) d) x`;

type Dimension = 'agent' | 'stack' | 'manager';
const COLUMN: Record<Dimension, string> = { agent: 'r.agent_id', stack: 'r.stack_id', manager: 'x.manager' };

/**
 * How each grouping unnests a record: into its fields (path, manager; a record holds a path once)
 * for `field`, else into its distinct managers. `key` is what a group is made of (stack × agent:
 * two uuids, hashed as they are rather than joined into text first), `text` the key as the
 * response shows it; `first` marks one row per record (the totals count those); `perKey` the rows
 * that count a record under its key; `sets` what each key is also broken down by (an agent's key
 * has one agent, a stack's one stack). An agent's key is its id as text, so that its set stays
 * apart from the totals' set of agents.
 */
interface Grouping {
  key: string;
  text: string;
  unnest: string;
  first: string;
  perKey: string;
  sets: Dimension[];
}

const BY_MANAGERS = { unnest: DISTINCT_MANAGERS, first: 'x.first' };
const keyed = (key: string, text = key) => ({ key, text });
const GROUPINGS: Record<DriftGrouping, Grouping> = {
  field: {
    ...keyed('x.path'),
    unnest: `unnest(${PATHS}, ${MANAGERS}) WITH ORDINALITY x(path, manager, ord)`,
    first: 'x.ord = 1',
    perKey: 'true',
    sets: ['agent', 'stack', 'manager'],
  },
  manager: { ...keyed("coalesce(x.manager, '')"), ...BY_MANAGERS, perKey: 'true', sets: ['agent', 'stack'] },
  agent: { ...keyed('r.agent_id::text'), ...BY_MANAGERS, perKey: 'x.first', sets: ['stack', 'manager'] },
  stack: { ...keyed('r.stack_id', 'r.stack_id::text'), ...BY_MANAGERS, perKey: 'x.first', sets: ['agent', 'manager'] },
  kind: { ...keyed('r.kind'), ...BY_MANAGERS, perKey: 'x.first', sets: ['agent', 'stack', 'manager'] },
  stack_agent: {
    ...keyed('r.stack_id, r.agent_id', "r.stack_id::text || '/' || r.agent_id::text"),
    ...BY_MANAGERS,
    perKey: 'x.first',
    sets: ['manager'],
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

/**
 * One row of the grouping sets: the total (no key), one agent of the total, a key alone, or a key
 * with one agent, one stack or one manager.
 */
interface SetRow {
  key: string | null;
  manager: string | null;
  by_key: boolean;
  by_agent: boolean;
  by_stack: boolean;
  by_manager: boolean;
  records: number;
  keyed: number;
  rows: number;
}

/**
 * One scan of the matching records, unnested and hash-aggregated by several grouping sets at
 * once: the total and each agent in it (the totals), each key, and each key with each agent,
 * stack and manager it has; only the `limit` largest keys come back. Distinct agents and stacks
 * are the rows of their sets, so no count DISTINCT sorts anything, and the totals need no second
 * scan (docs/perf/2026-11-28-drift.md).
 */
function groupSql(by: DriftGrouping, condition: string, joinStacks: boolean, limitParam: string): string {
  const g = GROUPINGS[by];
  const flag = (d: Dimension) => (g.sets.includes(d) ? `GROUPING(${COLUMN[d]}) = 0` : 'false');
  const sets = ['()', '(r.agent_id)', `(${g.key})`, ...g.sets.map((d) => `(${g.key}, ${COLUMN[d]})`)];
  return `
WITH sets AS (
  SELECT ${g.text} AS key, ${g.sets.includes('manager') ? 'x.manager' : 'NULL::text'} AS manager,
         GROUPING(${g.key}) = 0 AS by_key, (GROUPING(r.agent_id) = 0 AND GROUPING(${g.key}) <> 0) OR ${flag('agent')} AS by_agent,
         ${flag('stack')} AS by_stack, ${flag('manager')} AS by_manager,
         (count(*) FILTER (WHERE ${g.first}))::int AS records, (count(*) FILTER (WHERE ${g.perKey}))::int AS keyed, count(*)::int AS rows
    FROM drift_records r ${joinStacks ? 'JOIN stacks s ON s.id = r.stack_id' : ''}
   CROSS JOIN LATERAL ${g.unnest}
   WHERE ${condition}
   GROUP BY GROUPING SETS (${sets.join(', ')})
), top AS (
  SELECT key FROM sets WHERE by_key AND NOT (by_agent OR by_stack OR by_manager) ORDER BY keyed DESC, key LIMIT ${limitParam}
)
SELECT * FROM sets WHERE NOT by_key OR key IN (SELECT key FROM top)`;
}

export interface Grouped {
  groups: GroupRow[];
  /** Records matching the filter, and the distinct agents among them. */
  records: number;
  agents: number;
}

const emptyGroup = (key: string): GroupRow => ({
  key,
  label: null,
  stack_id: null,
  agent_id: null,
  records: 0,
  agents: 0,
  stacks: 0,
  managers: [],
});

/** The groups from their set rows, largest first, each with its five most frequent managers; and the totals. */
function assemble(by: DriftGrouping, rows: readonly SetRow[]): Grouped {
  const groups = new Map<string, GroupRow>();
  const totals = { records: 0, agents: 0 };
  for (const row of rows) {
    if (!row.by_key) {
      if (row.by_agent) totals.agents++;
      else totals.records = row.records;
      continue;
    }
    const key = row.key ?? '';
    const g = groups.get(key) ?? emptyGroup(key);
    groups.set(key, g);
    if (row.by_agent) g.agents++;
    else if (row.by_stack) g.stacks++;
    else if (row.by_manager) g.managers.push({ manager: row.manager, records: row.rows });
    else g.records = row.keyed;
  }
  const { sets } = GROUPINGS[by];
  for (const g of groups.values()) {
    if (!sets.includes('agent')) g.agents = 1;
    if (!sets.includes('stack')) g.stacks = 1;
    g.managers = g.managers.sort((a, b) => b.records - a.records || String(a.manager).localeCompare(String(b.manager))).slice(0, 5);
  }
  return { ...totals, groups: [...groups.values()].sort((a, b) => b.records - a.records || a.key.localeCompare(b.key)) };
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
 * with its distinct agents and stacks and its most frequent managers, and the totals. A deleted
 * object counts under the path '' (the whole document, in RFC 6901).
 */
export async function groupDrift(db: Db, filter: DriftFilter, by: DriftGrouping, limit: number): Promise<Grouped> {
  const values: unknown[] = [];
  const condition = where(filter, values);
  values.push(limit);
  const sql = groupSql(by, condition, filter.generatorId !== undefined, `$${values.length}`);
  const { rows } = await db.transaction(async (tx) => {
    // The hash tables of the grouping sets (tens of thousands of keys over 100,000 records) pass
    // the default 4 MB, and the planner then sorts on disk instead: several times slower. Raised
    // for this one statement only.
    await tx.query(`SET LOCAL work_mem = '${GROUPING_WORK_MEM}'`);
    return tx.query<SetRow>(sql, values);
  });
  const grouped = assemble(by, rows);
  return { ...grouped, groups: await name(db, by, grouped.groups) };
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

import { expect } from 'chai';
import pg from 'pg';
import { useTestInfra } from '@brokkr/testkit';
import { agentsForOneStackSql } from '../src/domain/agents-for-stacks.ts';

interface PlanNode {
  'Shared Hit Blocks'?: number;
}

/**
 * The wake list of one stack runs in every POST of a deployment object. A fleet registered in bulk
 * (before autovacuum analyzed the tables) once made the planner put `agents` outermost and run the
 * label leg once per agent: n² index probes, 0.4 s of PostgreSQL CPU per write at 1,000 agents.
 * Buffer hits count the work without timing it.
 */
describe('wake list of one stack: plan without statistics', () => {
  const infra = useTestInfra();
  let sql: pg.Pool;
  before(() => {
    sql = new pg.Pool({ connectionString: infra.db.url, max: 2 });
  });
  after(() => sql?.end());

  it('reads the matches once, not once per agent, on tables never analyzed', async () => {
    const agents = 400;
    const gen = (await sql.query<{ id: string }>("INSERT INTO generators (name) VALUES ('plan-gen') RETURNING id")).rows[0]!.id;
    const stack = (await sql.query<{ id: string }>("INSERT INTO stacks (name, generator_id) VALUES ('plan-stack', $1) RETURNING id", [gen]))
      .rows[0]!.id;
    await sql.query("INSERT INTO stack_labels (stack_id, label) VALUES ($1, 'wanted')", [stack]);
    const ids = (
      await sql.query<{ id: string }>(
        "INSERT INTO agents (name, cluster_name, status) SELECT 'plan-' || g, 'c', 'ACTIVE' FROM generate_series(1, $1) g RETURNING id",
        [agents],
      )
    ).rows.map((r) => r.id);
    await sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) SELECT unnest($1::uuid[]), $2', [ids, gen]);
    await sql.query("INSERT INTO agent_labels (agent_id, label) SELECT unnest($1::uuid[]), 'other'", [ids]);
    await sql.query('INSERT INTO agent_targets (agent_id, stack_id) SELECT unnest($1::uuid[]), $2', [ids.slice(0, 10), stack]);

    const { rows } = await sql.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${agentsForOneStackSql('$1::uuid')}`,
      [stack],
    );
    const hits = rows[0]!['QUERY PLAN'][0]!.Plan['Shared Hit Blocks'] ?? 0;
    // Once per match: a few thousand. Once per agent: over a hundred thousand.
    expect(hits).to.be.below(20 * agents);
    const matched = await sql.query(agentsForOneStackSql('$1::uuid'), [stack]);
    expect(matched.rows).to.have.length(10);
  });
});

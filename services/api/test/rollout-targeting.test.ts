import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { useTestInfra } from '@brokkr/testkit';
import { agentsForStack } from '../src/domain/agents-for-stacks.ts';

/**
 * Migration 0014's brokkr_stack_agents() restates the association rule for maintenance's wave
 * assignment (ADR 0016). It must pick the same ACTIVE agents as the api's own rule on a fixture
 * with every leg: labels and annotations (with and without generator registration), explicit
 * targets, inactive and deleted agents.
 */
describe('rollout targeting agrees with the api association rule', () => {
  const infra = useTestInfra();
  let sql: pg.Pool;
  before(() => {
    sql = new pg.Pool({ connectionString: infra.db.url, max: 2 });
  });
  after(() => sql?.end());

  const one = async (text: string, values: unknown[]) => (await sql.query(text, values)).rows[0] as { id: string };

  /** Agent i of the fixture: every leg of the rule in a different mix (i picks which). */
  async function fixtureAgent(i: number, stacks: string[], [gen, otherGen]: string[]): Promise<void> {
    const status = i % 7 === 0 ? 'INACTIVE' : 'ACTIVE';
    const a = await one('INSERT INTO agents (name, cluster_name, status) VALUES ($1, $2, $3) RETURNING id', [
      `a-${randomUUID()}`,
      'c',
      status,
    ]);
    if (i % 2 === 0) await sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [a.id, `l${i % 4 === 0 ? 0 : 1}`]);
    if (i % 3 === 0)
      await sql.query('INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [a.id, 'zone', `z${i % 3}`]);
    if (i % 5 === 0) await sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [a.id, stacks[i % 3]]);
    if (i % 4 !== 3) await sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)', [a.id, gen]);
    if (i % 6 === 0)
      await sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)', [a.id, otherGen]);
    if (i === 22) await sql.query('UPDATE agents SET deleted_at = now() WHERE id = $1', [a.id]);
  }

  it('brokkr_stack_agents(stack) = agentsForStack(stack) restricted to live ACTIVE agents', async () => {
    const gen = await one('INSERT INTO generators (name) VALUES ($1) RETURNING id', [`g-${randomUUID()}`]);
    const otherGen = await one('INSERT INTO generators (name) VALUES ($1) RETURNING id', [`g-${randomUUID()}`]);
    const stacks = [];
    for (let i = 0; i < 3; i++) {
      const s = await one('INSERT INTO stacks (name, generator_id) VALUES ($1, $2) RETURNING id', [
        `s-${randomUUID()}`,
        i === 2 ? otherGen.id : gen.id,
      ]);
      stacks.push(s.id);
      await sql.query('INSERT INTO stack_labels (stack_id, label) VALUES ($1, $2)', [s.id, `l${i % 2}`]);
      await sql.query('INSERT INTO stack_annotations (stack_id, key, value) VALUES ($1, $2, $3)', [s.id, 'zone', `z${i}`]);
    }
    for (let i = 0; i < 24; i++) await fixtureAgent(i, stacks, [gen.id, otherGen.id]);
    for (const stack of stacks) {
      const api = await agentsForStack(sql, stack);
      const { rows: active } = await sql.query<{ id: string }>("SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND status = 'ACTIVE'", [
        api,
      ]);
      const { rows } = await sql.query<{ agent_id: string }>('SELECT agent_id FROM brokkr_stack_agents($1)', [stack]);
      expect(rows.map((r) => r.agent_id).sort(), `stack ${stack}`).to.deep.equal(active.map((r) => r.id).sort());
      expect(rows.length, 'the fixture matches someone').to.be.greaterThan(0);
    }
  });
});

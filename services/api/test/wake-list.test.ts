import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { useTestInfra } from '@brokkr/testkit';
import { statementEvent } from '@brokkr/outbox';
import { insertDeploymentObject } from '../src/resources/deployment-objects/sql/create-deployment-object.ts';
import { agentsForStack, agentsForStacks } from '../src/domain/agents-for-stacks.ts';

/**
 * The wake list of one stack (agentsForOneStackSql: what a new deployment object and
 * agentsForStack without removals run) must be the general agentsForStacks query's answer on a
 * fixture with every leg of the association rule: labels and annotations with and without the
 * agent's registration for the stack's generator, an annotation key shared by everyone with
 * different values, explicit targets, inactive and deleted agents, a deleted stack.
 */
describe('wake list of one stack', () => {
  const infra = useTestInfra();
  let sql: pg.Pool;
  before(() => {
    sql = new pg.Pool({ connectionString: infra.db.url, max: 2 });
  });
  after(() => sql?.end());

  const one = async (text: string, values: unknown[]) => (await sql.query<{ id: string }>(text, values)).rows[0]!;

  /** Agent i: every leg of the rule in a different mix (i picks which). */
  async function fixtureAgent(i: number, stacks: string[], [gen, otherGen]: string[]): Promise<void> {
    const a = await one('INSERT INTO agents (name, cluster_name, status) VALUES ($1, $2, $3) RETURNING id', [
      `a-${randomUUID()}`,
      'c',
      i % 7 === 0 ? 'INACTIVE' : 'ACTIVE',
    ]);
    if (i % 2 === 0) await sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [a.id, `l${i % 4 === 0 ? 0 : 1}`]);
    if (i % 3 !== 2)
      await sql.query('INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [a.id, 'zone', `z${i % 4}`]);
    if (i % 5 === 0) await sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [a.id, stacks[i % 4]]);
    if (i % 4 !== 3) await sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)', [a.id, gen]);
    if (i % 6 === 0)
      await sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)', [a.id, otherGen]);
    if (i === 22 || i === 25) await sql.query('UPDATE agents SET deleted_at = now() WHERE id = $1', [a.id]);
  }

  async function fixture(): Promise<string[]> {
    const gen = await one('INSERT INTO generators (name) VALUES ($1) RETURNING id', [`g-${randomUUID()}`]);
    const otherGen = await one('INSERT INTO generators (name) VALUES ($1) RETURNING id', [`g-${randomUUID()}`]);
    const stacks: string[] = [];
    for (let i = 0; i < 4; i++) {
      const s = await one('INSERT INTO stacks (name, generator_id) VALUES ($1, $2) RETURNING id', [
        `s-${randomUUID()}`,
        i === 2 ? otherGen.id : gen.id,
      ]);
      stacks.push(s.id);
      await sql.query('INSERT INTO stack_labels (stack_id, label) VALUES ($1, $2)', [s.id, `l${i % 2}`]);
      await sql.query('INSERT INTO stack_annotations (stack_id, key, value) VALUES ($1, $2, $3)', [s.id, 'zone', `z${i % 3}`]);
    }
    await sql.query('UPDATE stacks SET deleted_at = now() WHERE id = $1', [stacks[3]]);
    for (let i = 0; i < 30; i++) await fixtureAgent(i, stacks, [gen.id, otherGen.id]);
    return stacks;
  }

  it('agentsForStack(stack) = agentsForStacks([stack]) for every kind of stack', async () => {
    const stacks = await fixture();
    let woken = 0;
    for (const stack of stacks) {
      const general = await agentsForStacks(sql, [stack]);
      const single = await agentsForStack(sql, stack);
      expect(single, `stack ${stack}`).to.deep.equal(general);
      woken += single.length;
    }
    expect(woken, 'the fixture matches someone').to.be.greaterThan(0);
  });

  it('a new deployment object wakes exactly agentsForStack(stack)', async () => {
    const [stack] = await fixture();
    const expected = await agentsForStack(sql, stack!);
    const outcome = await insertDeploymentObject(
      sql,
      {
        stackId: stack!,
        yamlContent: 'a: 1\n',
        yamlChecksum: 'x',
        isDeletionMarker: false,
        ownerGeneratorId: null,
        grantsChecked: true,
        source: null,
        rendered: false,
        layersRevision: null,
      },
      statementEvent('deployment.created'),
    );
    expect(outcome.inserted).to.equal(true);
    expect(outcome.inserted && outcome.wakeAgentIds).to.deep.equal(expected);
    expect(expected.length).to.be.greaterThan(0);
  });
});

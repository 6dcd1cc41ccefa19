import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { statementEvent } from '@brokkr/outbox';
import { useTestInfra } from '@brokkr/testkit';
import { targetsAgent } from '../src/domain/association.ts';
import { insertWorkOrder, type NewWorkOrderFields } from '../src/resources/work-orders/sql/create-work-order.ts';
// The other spelling of the rule lives in maintenance; this test is where the two meet.
import { workOrderAgents } from '../../maintenance/src/sql/work-order-agents.ts';

/**
 * The work-order ↔ agent rule (an explicit target, any shared label, or any shared key and value
 * of an annotation) is spelled three times: targetsAgent (domain/association.ts: the pending list
 * and the claim), the create statement's wake list (create-work-order.ts, from the request's
 * parameters), and maintenance's workOrderAgents (whom a released claim or a due retry wakes).
 * On live agents they must pick the same pairs, on a fixture with every leg alone and together,
 * near misses (an annotation key with another value, a label spelled like an annotation key),
 * an order with no targeting, and inactive and deleted agents.
 */
describe('work-order targeting: the api and maintenance pick the same agents', () => {
  const infra = useTestInfra();
  let sql: pg.Pool;
  before(() => {
    sql = new pg.Pool({ connectionString: infra.db.url, max: 2 });
  });
  after(() => sql?.end());

  /** Agent i: labels l0/l1, annotation zone=z0..z3, some inactive, two deleted (i picks which). */
  async function fixtureAgent(i: number): Promise<string> {
    const { rows } = await sql.query<{ id: string }>('INSERT INTO agents (name, cluster_name, status) VALUES ($1, $2, $3) RETURNING id', [
      `a-${randomUUID()}`,
      'c',
      i % 7 === 0 ? 'INACTIVE' : 'ACTIVE',
    ]);
    const id = rows[0]!.id;
    if (i % 2 === 0) await sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [id, `l${i % 4 === 0 ? 0 : 1}`]);
    if (i % 3 !== 2) await sql.query('INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [id, 'zone', `z${i % 4}`]);
    if (i % 5 === 0) await sql.query('INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [id, 'region', 'eu']);
    if (i === 20 || i === 21) await sql.query('UPDATE agents SET deleted_at = now() WHERE id = $1', [id]);
    return id;
  }

  type Targeting = Pick<NewWorkOrderFields, 'agentIds' | 'labels' | 'annotations'>;

  /** Orders of every kind; `agents[i]` is fixture agent i. */
  const ordersOn = (agents: string[]): Record<string, Targeting> => ({
    'a label': { agentIds: [], labels: ['l0'], annotations: [] },
    'an annotation': { agentIds: [], labels: [], annotations: [['zone', 'z1']] },
    'explicit targets, one deleted, one inactive': { agentIds: [agents[3]!, agents[7]!, agents[21]!], labels: [], annotations: [] },
    'every leg, overlapping': {
      agentIds: [agents[0]!, agents[2]!],
      labels: ['l1'],
      annotations: [
        ['zone', 'z2'],
        ['region', 'eu'],
      ],
    },
    'an annotation key with a value nobody has': { agentIds: [], labels: [], annotations: [['zone', 'z9']] },
    'a label spelled like an annotation key': { agentIds: [], labels: ['zone'], annotations: [] },
    'no targeting': { agentIds: [], labels: [], annotations: [] },
  });

  async function createOrder(t: Targeting) {
    const fields: NewWorkOrderFields = {
      workType: 'build',
      yamlContent: 'a: 1\n',
      maxRetries: 3,
      backoffSeconds: 60,
      claimTimeoutSeconds: 3600,
      ...t,
    };
    return insertWorkOrder(sql, fields, statementEvent('workorder.created'));
  }

  /** targetsAgent for every live agent (its callers add that the agent is live and ACTIVE). */
  async function apiAgents(orderId: string): Promise<string[]> {
    const { rows } = await sql.query<{ id: string }>(
      `SELECT a.id FROM agents a, work_orders w WHERE w.id = $1 AND a.deleted_at IS NULL AND ${targetsAgent('a.id')}`,
      [orderId],
    );
    return rows.map((r) => r.id).sort();
  }

  async function maintenanceAgents(orderIds: string[]): Promise<string[]> {
    const { rows } = await sql.query<{ ids: string[] }>(
      `WITH orders AS (SELECT unnest($1::uuid[]) AS id) SELECT ${workOrderAgents('orders')} AS ids`,
      [orderIds],
    );
    return rows[0]!.ids.sort();
  }

  it('targetsAgent, the create statement and workOrderAgents agree on every kind of order', async () => {
    const agents: string[] = [];
    for (let i = 0; i < 24; i++) agents.push(await fixtureAgent(i));
    const picked = new Map<string, string[]>();
    for (const [kind, targeting] of Object.entries(ordersOn(agents))) {
      const created = await createOrder(targeting);
      const api = await apiAgents(created.order.id);
      expect([...created.targetedAgents].sort(), `${kind}: the create statement's wake list`).to.deep.equal(api);
      expect(await maintenanceAgents([created.order.id]), `${kind}: maintenance`).to.deep.equal(api);
      picked.set(created.order.id, api);
    }

    // Maintenance asks for the agents of several orders at once (every released claim of a tick).
    const union = [...new Set([...picked.values()].flat())].sort();
    expect(await maintenanceAgents([...picked.keys()]), 'several orders at once').to.deep.equal(union);

    // The fixture is not trivially agreed on: orders of each leg alone pick someone, near misses nobody.
    const counts = [...picked.values()].map((ids) => ids.length);
    expect(
      counts.slice(0, 4).every((n) => n > 0),
      `orders that target someone: ${counts.join(', ')}`,
    ).to.equal(true);
    expect(counts.slice(4), 'near misses and no targeting').to.deep.equal([0, 0, 0]);
    expect(
      union.filter((id) => id === agents[20] || id === agents[21]),
      'a deleted agent is never picked',
    ).to.deep.equal([]);
  });
});

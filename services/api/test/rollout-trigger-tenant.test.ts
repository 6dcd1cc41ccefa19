import { expect } from 'chai';
import pg from 'pg';
import { migrateLatest } from '@brokkr/db';
import { useTestInfra } from '@brokkr/testkit';

/**
 * Migration 0017 recreated the rollout trigger without `SET search_path FROM CURRENT` (a GUC
 * round per deployment object), naming its tables with the schema it was created in instead. It
 * must still open the rollout in its own tenant's tables when fired from a session whose
 * search_path names another schema (or none of ours).
 */
describe('rollout trigger of a tenant schema', () => {
  const infra = useTestInfra({ db: 'empty' });
  let pool: pg.Pool;
  before(async () => {
    await migrateLatest({ url: infra.db.url });
    await migrateLatest({ url: infra.db.url, schema: 'tenant_r' });
    pool = new pg.Pool({ connectionString: infra.db.url, max: 1 });
  });
  after(() => pool?.end());

  it('pins no search_path and opens the rollout in its own schema', async () => {
    const { rows: config } = await pool.query<{ schema: string; proconfig: string[] | null }>(
      `SELECT n.nspname AS schema, p.proconfig FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.proname = 'start_rollout_on_new_object' ORDER BY 1`,
    );
    expect(config).to.deep.equal([
      { schema: 'public', proconfig: null },
      { schema: 'tenant_r', proconfig: null },
    ]);

    const { rows } = await pool.query<{ id: string }>(`
      WITH g AS (INSERT INTO tenant_r.generators (name) VALUES ('g') RETURNING id)
      INSERT INTO tenant_r.stacks (name, generator_id) SELECT 's', id FROM g RETURNING id`);
    const stackId = rows[0]!.id;
    await pool.query(`INSERT INTO tenant_r.rollout_policies (stack_id, policy) VALUES ($1, '{"waves": [50, 100]}')`, [stackId]);
    const insert = (yaml: string) =>
      pool.query(`INSERT INTO tenant_r.deployment_objects (stack_id, yaml_content, yaml_checksum) VALUES ($1, $2, 'c') RETURNING id`, [
        stackId,
        yaml,
      ]);
    const first = (await insert('a: 1')).rows[0]!.id as string;
    const second = (await insert('a: 2')).rows[0]!.id as string;

    const opened = await pool.query('SELECT deployment_object_id, baseline_object_id, status FROM tenant_r.rollouts');
    expect(opened.rows).to.deep.equal([{ deployment_object_id: second, baseline_object_id: first, status: 'pending' }]);
    expect((await pool.query('SELECT 1 FROM public.rollouts')).rowCount).to.equal(0);
  });
});

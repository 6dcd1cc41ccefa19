import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import pg from 'pg';
import { useTestInfra } from '@brokkr/testkit';
import { migrateLatest } from '../src/index.ts';

const CONTRACT_TABLES = [
  'agents',
  'agent_labels',
  'agent_annotations',
  'generators',
  'stacks',
  'stack_labels',
  'stack_annotations',
  'agent_targets',
  'deployment_objects',
  'agent_events',
  'app_initialization',
  'admin_role',
  'stack_templates',
  'template_labels',
  'template_annotations',
  'template_targets',
  'rendered_deployment_objects',
  'work_orders',
  'work_order_log',
  'work_order_targets',
  'work_order_labels',
  'work_order_annotations',
  'deployment_health',
  'diagnostic_requests',
  'diagnostic_results',
  'webhook_subscriptions',
  'webhook_deliveries',
  'audit_logs',
  'agent_generator_registrations',
  'agent_k8s_events',
  'agent_pod_logs',
];
const ALL_TABLES = [...CONTRACT_TABLES, 'outbox'];

// The API reports these names in `details.constraint`: they must not drift.
const REPORTED_NAMES = [
  'unique_agent_cluster',
  'unique_generator_name',
  'unique_stack_name',
  'unique_agent_stack',
  'unique_stack_annotation',
  'agent_labels_agent_id_label_key',
  'agent_annotations_agent_id_key_key',
  'stack_labels_stack_id_label_key',
  'unique_agent_deployment_health',
  'unique_template_version',
  'deployment_objects_sequence_id_key',
  'agent_generator_registrations_agent_id_generator_id_key',
  'unique_delivery_event_subscription',
];

/** Resolves with the database error a statement fails with; fails the test if it succeeds. */
async function failure(statement: Promise<unknown>): Promise<pg.DatabaseError> {
  try {
    await statement;
  } catch (err) {
    if (err instanceof pg.DatabaseError) return err;
    throw err;
  }
  throw new Error('expected the statement to be rejected');
}

async function tablesIn(client: pg.Pool, schema: string): Promise<string[]> {
  const { rows } = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`,
    [schema],
  );
  return rows.map((r) => r.table_name);
}

describe('migrations', () => {
  const infra = useTestInfra();
  let pool: pg.Pool;

  async function one<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R> {
    const { rows } = await pool.query<R>(text, values);
    if (!rows[0]) throw new Error(`no row from: ${text}`);
    return rows[0];
  }
  const generator = (name: string) => one<{ id: string }>('INSERT INTO generators (name) VALUES ($1) RETURNING id', [name]);
  const stack = (generatorId: string, name: string) =>
    one<{ id: string }>('INSERT INTO stacks (name, generator_id) VALUES ($1, $2) RETURNING id', [name, generatorId]);
  const agent = (name: string) => one<{ id: string }>(`INSERT INTO agents (name, cluster_name) VALUES ($1, 'c1') RETURNING id`, [name]);
  const deploymentObject = (stackId: string, yaml: string) =>
    one<{ id: string; sequence_id: number }>(
      `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum) VALUES ($1, $2, md5($2)) RETURNING id, sequence_id`,
      [stackId, yaml],
    );
  const objectsOf = async (stackId: string) =>
    (
      await pool.query<{
        sequence_id: number;
        deleted_at: Date | null;
        is_deletion_marker: boolean;
        yaml_content: string;
        yaml_checksum: string;
        submitted_at: Date;
      }>('SELECT * FROM deployment_objects WHERE stack_id = $1 ORDER BY sequence_id', [stackId])
    ).rows;

  before(() => {
    pool = new pg.Pool({ connectionString: infra.db.url, max: 4 });
  });

  after(async () => {
    await pool?.end();
  });

  it('creates every table of the contract plus the outbox', async () => {
    expect(await tablesIn(pool, 'public')).to.include.members(ALL_TABLES);
  });

  it('keeps the constraint and index names the API reports', async () => {
    const { rows } = await pool.query<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint UNION SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`,
    );
    expect(rows.map((r) => r.name)).to.include.members(REPORTED_NAMES);
  });

  // Every row written pays for every index of its table (migrations 0017-0019, ADR 0027). Only
  // indexes of the same access method cover each other (a GIN index is no B-tree's prefix).
  it('has no index that another index of its table already covers', async () => {
    const { rows } = await pool.query<{ redundant: string; covered_by: string }>(
      `SELECT a.indexrelid::regclass::text AS redundant, b.indexrelid::regclass::text AS covered_by
         FROM pg_index a
         JOIN pg_index b ON b.indrelid = a.indrelid AND b.indexrelid <> a.indexrelid
         JOIN pg_class t ON t.oid = a.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         JOIN pg_class ia ON ia.oid = a.indexrelid
         JOIN pg_class ib ON ib.oid = b.indexrelid AND ib.relam = ia.relam
        WHERE n.nspname = 'public' AND NOT a.indisunique
          AND a.indpred IS NULL AND b.indpred IS NULL AND a.indexprs IS NULL AND b.indexprs IS NULL
          AND (b.indkey::text || ' ') LIKE (a.indkey::text || ' %')`,
    );
    expect(rows).to.deep.equal([]);
  });

  it('rejects any change to a deployment object but a soft delete', async () => {
    const g = await generator('immutability-gen');
    const s = await stack(g.id, 'immutability-stack');
    const object = await deploymentObject(s.id, 'kind: ConfigMap');
    const err = await failure(pool.query(`UPDATE deployment_objects SET yaml_content = 'kind: Secret' WHERE id = $1`, [object.id]));
    expect(err.code).to.equal('P0001');
    await pool.query('UPDATE deployment_objects SET deleted_at = now() WHERE id = $1', [object.id]);
    const again = await failure(pool.query('UPDATE deployment_objects SET deleted_at = now() WHERE id = $1', [object.id]));
    expect(again.code).to.equal('P0001');
  });

  it('soft-deleting a stack retires its objects and appends exactly one deletion marker', async () => {
    const g = await generator('stack-delete-gen');
    const s = await stack(g.id, 'stack-delete-stack');
    const first = await deploymentObject(s.id, 'a: 1');
    const second = await deploymentObject(s.id, 'a: 2');
    const { deleted_at: deletedAt } = await one<{ deleted_at: Date }>(
      'UPDATE stacks SET deleted_at = now() WHERE id = $1 RETURNING deleted_at',
      [s.id],
    );
    const objects = await objectsOf(s.id);
    expect(objects).to.have.length(3);
    const [a, b, marker] = objects;
    expect(a?.deleted_at?.getTime()).to.equal(deletedAt.getTime());
    expect(b?.deleted_at?.getTime()).to.equal(deletedAt.getTime());
    expect(marker).to.include({
      is_deletion_marker: true,
      yaml_content: '',
      yaml_checksum: 'd41d8cd98f00b204e9800998ecf8427e',
      deleted_at: null,
    });
    expect(marker?.submitted_at.getTime()).to.equal(deletedAt.getTime());
    expect(marker?.sequence_id).to.be.greaterThan(Math.max(first.sequence_id, second.sequence_id));
  });

  it('soft-deleting a generator cascades to its stacks, their objects (markers included) and its templates', async () => {
    const g = await generator('cascade-gen');
    const stacks = [await stack(g.id, 'cascade-a'), await stack(g.id, 'cascade-b')];
    for (const s of stacks) await deploymentObject(s.id, `stack: ${s.id}`);
    await pool.query(
      `INSERT INTO stack_templates (generator_id, name, template_content, parameters_schema, checksum) VALUES ($1, 't', 'x', '{}', 'c')`,
      [g.id],
    );
    await pool.query('UPDATE generators SET deleted_at = now() WHERE id = $1', [g.id]);

    const liveStacks = await pool.query('SELECT 1 FROM stacks WHERE generator_id = $1 AND deleted_at IS NULL', [g.id]);
    expect(liveStacks.rowCount).to.equal(0);
    for (const s of stacks) {
      const objects = await objectsOf(s.id);
      expect(objects.filter((o) => o.is_deletion_marker)).to.have.length(1);
      expect(objects.every((o) => o.deleted_at !== null)).to.equal(true);
    }
    const liveTemplates = await pool.query('SELECT 1 FROM stack_templates WHERE generator_id = $1 AND deleted_at IS NULL', [g.id]);
    expect(liveTemplates.rowCount).to.equal(0);
  });

  it('soft-deleting an agent soft-deletes its events', async () => {
    const g = await generator('agent-events-gen');
    const s = await stack(g.id, 'agent-events-stack');
    const object = await deploymentObject(s.id, 'b: 1');
    const a = await agent('events-agent');
    await pool.query(`INSERT INTO agent_events (agent_id, deployment_object_id, event_type, status) VALUES ($1, $2, 'DEPLOY', 'SUCCESS')`, [
      a.id,
      object.id,
    ]);
    await pool.query('UPDATE agents SET deleted_at = now() WHERE id = $1', [a.id]);
    const live = await pool.query('SELECT 1 FROM agent_events WHERE agent_id = $1 AND deleted_at IS NULL', [a.id]);
    expect(live.rowCount).to.equal(0);
  });

  it('refuses deletes from admin_role', async () => {
    await pool.query(`INSERT INTO admin_role (pak_hash) VALUES ('h')`);
    const err = await failure(pool.query('DELETE FROM admin_role'));
    expect(err.message).to.equal('Deleting from admin_role table is not allowed');
  });

  it('lets a name be reused after a soft delete but rejects duplicates among live rows', async () => {
    const cases: { table: string; insert: string; constraint: string }[] = [
      { table: 'agents', insert: `INSERT INTO agents (name, cluster_name) VALUES ('dup', 'c')`, constraint: 'unique_agent_cluster' },
      { table: 'generators', insert: `INSERT INTO generators (name) VALUES ('dup')`, constraint: 'unique_generator_name' },
      {
        table: 'stack_templates',
        insert: `INSERT INTO stack_templates (name, template_content, parameters_schema, checksum) VALUES ('dup', 'x', '{}', 'c')`,
        constraint: 'unique_template_version',
      },
    ];
    const g = await generator('names-gen');
    cases.push({
      table: 'stacks',
      insert: `INSERT INTO stacks (name, generator_id) VALUES ('dup', '${g.id}')`,
      constraint: 'unique_stack_name',
    });
    for (const c of cases) {
      await pool.query(c.insert);
      const err = await failure(pool.query(c.insert));
      expect(err.code, c.table).to.equal('23505');
      expect(err.constraint, c.table).to.equal(c.constraint);
      await pool.query(`UPDATE ${c.table} SET deleted_at = now() WHERE deleted_at IS NULL AND name = 'dup'`);
      await pool.query(c.insert);
    }
  });

  it('rejects a second delivery of the same event to the same subscription', async () => {
    const sub = await one<{ id: string }>(
      `INSERT INTO webhook_subscriptions (name, url_encrypted, event_types) VALUES ('s', '\\x01', '{*}') RETURNING id`,
    );
    const insert = `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload)
                    VALUES ($1, 'stack.created', '00000000-0000-4000-8000-000000000001', '{}')`;
    await pool.query(insert, [sub.id]);
    const err = await failure(pool.query(insert, [sub.id]));
    expect(err.code).to.equal('23505');
    expect(err.constraint).to.equal('unique_delivery_event_subscription');
  });

  it('indexes the unpublished outbox rows with a partial index', async () => {
    const { rows } = await pool.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'outbox'`);
    const defs = rows.map((r) => r.indexdef);
    expect(defs.some((d) => d.includes('(created_at)') && d.includes('WHERE (published_at IS NULL)'))).to.equal(true);
  });

  it('indexes the work-order queue only for the queries it runs (every index is written at each step of an order)', async () => {
    const indexesOf = async (table: string) =>
      (
        await pool.query<{ indexname: string }>(
          `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 ORDER BY indexname`,
          [table],
        )
      ).rows.map((r) => r.indexname);
    expect(await indexesOf('work_orders')).to.deep.equal([
      'idx_work_orders_claimed_by',
      'idx_work_orders_pending_type',
      'idx_work_orders_retry',
      'idx_work_orders_stale_claims',
      'work_orders_pkey',
    ]);
    expect(await indexesOf('work_order_targets')).to.deep.equal([
      'idx_work_order_targets_agent_id',
      'work_order_targets_pkey',
      'work_order_targets_work_order_id_agent_id_key',
    ]);
    expect(await indexesOf('work_order_log')).to.deep.equal([
      'idx_work_order_log_claimed_by',
      'idx_work_order_log_completed_at',
      'idx_work_order_log_type_completed',
      'work_order_log_pkey',
    ]);
  });
});

describe('migrateLatest', () => {
  const infra = useTestInfra({ db: 'empty', each: true });
  let pool: pg.Pool;

  beforeEach(() => {
    pool = new pg.Pool({ connectionString: infra.db.url, max: 2 });
  });

  afterEach(async () => {
    await pool?.end();
  });

  it('applies every migration to an empty database once, then nothing', async () => {
    const first = await migrateLatest({ url: infra.db.url });
    expect(first).to.have.length.greaterThan(0);
    expect(first).to.deep.equal([...first].sort());
    expect(await migrateLatest({ url: infra.db.url })).to.deep.equal([]);
    expect(await tablesIn(pool, 'public')).to.include.members(ALL_TABLES);
  });

  it('creates the tables in a named schema, whose triggers stay inside it', async () => {
    await migrateLatest({ url: infra.db.url, schema: 'tenant_a' });
    expect(await tablesIn(pool, 'tenant_a')).to.include.members(ALL_TABLES);
    expect(await tablesIn(pool, 'public')).to.not.include('stacks');
    expect(await migrateLatest({ url: infra.db.url, schema: 'tenant_a' })).to.deep.equal([]);

    // Fired from a session whose search_path does not name the tenant.
    const { rows } = await pool.query<{ count: number }>(`
      WITH g AS (INSERT INTO tenant_a.generators (name) VALUES ('g') RETURNING id),
           s AS (INSERT INTO tenant_a.stacks (name, generator_id) SELECT 's', id FROM g RETURNING id)
      SELECT count(*)::int AS count FROM s`);
    expect(rows[0]?.count).to.equal(1);
    await pool.query('UPDATE tenant_a.stacks SET deleted_at = now()');
    const markers = await pool.query('SELECT 1 FROM tenant_a.deployment_objects WHERE is_deletion_marker');
    expect(markers.rowCount).to.equal(1);
  });

  it('keeps knex and the migration files out of the calling process', async () => {
    // A fresh process records every module it loads while it migrates an empty database, then
    // an up-to-date one: knex runs in the migration child process, or not at all.
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) });
      const { migrateLatest } = await import('@brokkr/db');
      const first = await migrateLatest({ url: process.env.TEST_DB_URL });
      const second = await migrateLatest({ url: process.env.TEST_DB_URL });
      console.log(JSON.stringify({ first, second, loaded }));`;
    const cwd = fileURLToPath(new URL('..', import.meta.url));
    const args = ['--conditions=development', '--import', 'tsx', '--input-type=module', '-e', script];
    const env = { ...process.env, TEST_DB_URL: infra.db.url };
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd, env });
    const { first, second, loaded } = JSON.parse(stdout) as { first: string[]; second: string[]; loaded: string[] };
    expect(first).to.include('0001_core.ts');
    expect(second).to.deep.equal([]);
    expect(loaded.some((url) => url.includes('/shared/db/'))).to.equal(true);
    expect(loaded.filter((url) => url.includes('/node_modules/knex/') || url.includes('/migrations/'))).to.deep.equal([]);
    expect(await tablesIn(pool, 'public')).to.include.members(ALL_TABLES);
  });

  it('reports a failing migration with its own message and code', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-migrations-'));
    const saved = process.env.BROKKR_MIGRATIONS_DIR;
    try {
      await writeFile(
        path.join(dir, '0001_broken.ts'),
        `export async function up(knex: any): Promise<void> { await knex.raw('SELECT * FROM no_such_table'); }\n` +
          `export async function down(): Promise<void> {}\n`,
      );
      process.env.BROKKR_MIGRATIONS_DIR = dir;
      const err = await migrateLatest({ url: infra.db.url }).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );
      expect(err?.message).to.contain('no_such_table');
      expect(err?.code).to.equal('42P01');
    } finally {
      if (saved === undefined) delete process.env.BROKKR_MIGRATIONS_DIR;
      else process.env.BROKKR_MIGRATIONS_DIR = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

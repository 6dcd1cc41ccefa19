import { expect } from 'chai';
import { ConfigError } from '@brokkr/errors';
import { createDb, ensureSchema, isUniqueViolation, pgErrorCode, PG_ERRORS, type Db } from '@brokkr/db';
import { useTestInfra } from '@brokkr/testkit';

describe('@brokkr/db createDb', () => {
  const infra = useTestInfra();
  let db: Db;

  before(async () => {
    db = createDb({ url: infra.db.url, poolSize: 4, applicationName: 'db-test' });
    await db.query('CREATE TABLE db_test_items (id int PRIMARY KEY, label text NOT NULL)');
  });

  after(async () => {
    await db?.close();
  });

  it('runs parameterised queries on the pool', async () => {
    const { rows } = await db.query<{ sum: number; name: string }>('SELECT $1::int + $2::int AS sum, current_database() AS name', [40, 2]);
    expect(rows).to.deep.equal([{ sum: 42, name: infra.db.name }]);
  });

  it('returns bigint columns as numbers', async () => {
    const { rows } = await db.query<{ big: number }>('SELECT 9007199254740991::bigint AS big');
    expect(rows[0]?.big).to.equal(Number.MAX_SAFE_INTEGER);
  });

  it('commits a transaction whose function resolves', async () => {
    const result = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO db_test_items VALUES (1, $1)', ['one']);
      await tx.query('INSERT INTO db_test_items VALUES (2, $1)', ['two']);
      return 'done';
    });
    expect(result).to.equal('done');
    const { rows } = await db.query('SELECT id, label FROM db_test_items ORDER BY id');
    expect(rows).to.deep.equal([
      { id: 1, label: 'one' },
      { id: 2, label: 'two' },
    ]);
  });

  it('rolls back a transaction whose function throws and rethrows the error', async () => {
    const err = await db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO db_test_items VALUES (3, $1)', ['three']);
        await tx.query('INSERT INTO db_test_items VALUES (1, $1)', ['duplicate']);
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isUniqueViolation(err)).to.equal(true);
    expect(pgErrorCode(err)).to.equal(PG_ERRORS.uniqueViolation);
    const { rows } = await db.query<{ id: number }>('SELECT id FROM db_test_items ORDER BY id');
    expect(rows.map((r) => r.id)).to.deep.equal([1, 2]);
  });

  it('rolls back on an application error too and returns the client to the pool', async () => {
    const boom = new Error('application said no');
    for (let i = 0; i < 6; i++) {
      const err = await db
        .transaction(async (tx) => {
          await tx.query('INSERT INTO db_test_items VALUES (10, $1)', ['ten']);
          throw boom;
        })
        .catch((e: unknown) => e);
      expect(err).to.equal(boom);
    }
    // More failed transactions than the pool has clients: had one leaked its client, the
    // query below would wait forever. Every client is idle again.
    expect(db.pool.idleCount).to.equal(db.pool.totalCount);
    const { rows } = await db.query('SELECT 1 FROM db_test_items WHERE id = 10');
    expect(rows).to.have.length(0);
  });

  it('closes safely more than once', async () => {
    const extra = createDb({ url: infra.db.url, poolSize: 1 });
    await extra.query('SELECT 1');
    await extra.close();
    await extra.close();
    expect(extra.pool.ended).to.equal(true);
  });
});

describe('@brokkr/db schema option', () => {
  const infra = useTestInfra();
  let db: Db;

  before(async () => {
    db = createDb({ url: infra.db.url, schema: 'tenant_a', poolSize: 2 });
    await ensureSchema(db);
    await ensureSchema(db);
  });

  after(async () => {
    await db?.close();
  });

  it('puts the tenant schema first on the search_path of every pooled connection', async () => {
    const { rows } = await db.query<{ search_path: string }>('SHOW search_path');
    expect(rows[0]?.search_path.replace(/[" ]/g, '')).to.equal('tenant_a,public');
    expect(db.schema).to.equal('tenant_a');
  });

  it('creates unqualified tables inside the tenant schema', async () => {
    await db.query('CREATE TABLE tenant_only (id int)');
    const { rows } = await db.query<{ table_schema: string; table_name: string }>(
      `SELECT table_schema, table_name FROM information_schema.tables WHERE table_name = 'tenant_only'`,
    );
    expect(rows).to.deep.equal([{ table_schema: 'tenant_a', table_name: 'tenant_only' }]);
  });

  it('refuses a schema name that is not a plain identifier', () => {
    for (const bad of ['Tenant', 'a-b', 'x"; DROP SCHEMA public; --', '1abc', '']) {
      expect(() => createDb({ url: infra.db.url, schema: bad }), bad).to.throw(ConfigError, /schema name/);
    }
  });
});

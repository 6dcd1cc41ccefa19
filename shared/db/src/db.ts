import pg from 'pg';
import { ConfigError } from '@brokkr/errors';

export interface DbSettings {
  url: string;
  /** Multi-tenant mode: all tables live in this schema (created when missing). */
  schema?: string | undefined;
  poolSize?: number;
  applicationName?: string;
}

/** Anything that can run a parameterised query: the pool, or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    textOrStatement: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/**
 * A named prepared statement: Postgres parses and plans it once per connection instead of on
 * every call. Use it on hot paths whose SQL is fixed (auth, target state, outbox): planning the
 * target-state statement costs several times more than running it (see load-tests/api.ts).
 * The text must not vary between calls with the same name.
 */
export function prepared(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  return (values) => ({ name, text, values });
}

export interface Db {
  /** Raw pg pool: every query is hand-written SQL (knex is for migrations only; ADR 0008). */
  pool: pg.Pool;
  schema: string | undefined;
  query: Queryable['query'];
  /** Runs `fn` in one transaction on one client: commit on resolve, rollback on throw. */
  transaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Ends the pool; waits for checked-out clients to be released. */
  close(): Promise<void>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

// Return bigint columns (sequence_id) as JS numbers: they are far below 2^53 and
// Brokkr's JSON carries them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

export function createDb(settings: DbSettings): Db {
  const schema = settings.schema;
  if (schema !== undefined && !IDENTIFIER.test(schema)) {
    throw new ConfigError(`invalid database schema name ${JSON.stringify(schema)}`);
  }
  const searchPath = schema ? `"${schema}", public` : undefined;
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize ?? 20,
    application_name: settings.applicationName ?? 'brokkr',
    ...(searchPath ? { options: `-c search_path=${searchPath.replace(/[" ]/g, '')}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  async function transaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  let closing: Promise<void> | undefined;
  return {
    pool,
    schema,
    query: (textOrStatement, values) => pool.query(textOrStatement, values),
    transaction,
    close() {
      // pg's Pool.end() throws on a second call; shutdown paths may close twice.
      closing ??= pool.end();
      return closing;
    },
  };
}

/** Creates the tenant schema when it is missing (idempotent, safe to run from every replica). */
export async function ensureSchema(db: Db): Promise<void> {
  if (db.schema) await db.pool.query(`CREATE SCHEMA IF NOT EXISTS "${db.schema}"`);
}

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from './database.ts';
import { startTestNats, type TestNatsHandle } from './nats.ts';
import { refuseInFastTier } from './tier.ts';

export interface TestInfraOptions {
  /** A database cloned from the migrated template (true, the default), an empty one ('empty', for migration tests), or none (false). */
  db?: boolean | 'empty';
  /** A nats-server with JetStream of the block's own (default false). */
  nats?: boolean;
  /** Fresh ones for every test (beforeEach/afterEach) instead of one for the whole describe block (before/after). */
  each?: boolean;
}

/**
 * What `useTestInfra` hands a describe block. Its fields are set once the block's `before` (or
 * `beforeEach`) has run; reading one earlier, after the teardown, or one the block did not ask for
 * throws an error that says so.
 */
export interface TestInfra {
  /** The block's database: `url`, `name` (and `drop`, which the teardown calls). */
  readonly db: TestDatabase;
  /**
   * The block's nats-server: `url`, `port`, `stop()` (a test may stop it to simulate an outage). It
   * requires authentication as `npm start`'s does: connect as the test with testOnlyNatsOptions /
   * testOnlyBusSettings, as a service with serviceBusSettings (spawnService does it by itself).
   */
  readonly nats: TestNatsHandle;
  /**
   * Starts the nats-server again on the same port with the same JetStream store and passwords
   * (stopping it first if it still runs), e.g. after `infra.nats.stop()`; `infra.nats` is then the
   * new server.
   */
  restartNats(): Promise<TestNatsHandle>;
}

interface State {
  phase: 'defined' | 'up' | 'down';
  db?: TestDatabase;
  nats?: TestNatsHandle;
  storeDir?: string;
}

/**
 * Gives the enclosing describe block a database and/or a nats-server of its own:
 *
 *     describe('x', () => {
 *       const infra = useTestInfra({ nats: true });
 *       let pool: pg.Pool;
 *       before(() => { pool = new pg.Pool({ connectionString: infra.db.url }); });
 *       after(() => pool.end());
 *     });
 *
 * Call it inside a describe block (not at the top of a file: root hooks would run once for every
 * file) and before the hooks that use it, since mocha runs hooks in the order they are declared.
 * The teardown runs after every `after` hook of the block, wherever it was declared: it is
 * registered when the set-up runs, so pools and connections the block closes in its own `after`
 * are gone before the database is dropped and NATS stopped.
 */
export function useTestInfra(options: TestInfraOptions = {}): TestInfra {
  // In the fast tier the file fails as it loads, before any of its tests runs.
  refuseInFastTier('useTestInfra()');
  const state: State = { phase: 'defined' };
  let teardownRegistered = false;
  const setUpHook = options.each ? globalThis.beforeEach : globalThis.before;
  if (typeof setUpHook !== 'function')
    throw new Error('useTestInfra() must be called while mocha loads a test file (inside a describe block)');
  setUpHook('useTestInfra: set up', async function (this: Mocha.Context) {
    if (!teardownRegistered) {
      registerTeardown(this, options.each === true, () => tearDown(state));
      teardownRegistered = true;
    }
    await setUp(state, options);
  });
  return {
    get db() {
      return ready(state, 'db', options.db ?? true);
    },
    get nats() {
      return ready(state, 'nats', options.nats ?? false);
    },
    async restartNats() {
      const old = ready(state, 'nats', options.nats ?? false);
      await old.stop();
      state.nats = await startTestNats({ port: old.port, storeDir: state.storeDir!, passwords: old.passwords });
      return state.nats;
    },
  };
}

/** Adds the teardown to the hook's own suite now, so it comes after every hook declared there. */
function registerTeardown(ctx: Mocha.Context, each: boolean, tearDown: () => Promise<void>): void {
  const suite = ctx.test?.parent;
  if (!suite || suite.root) {
    throw new Error(
      'useTestInfra() was called outside a describe block: its hooks would run once for the whole run; call it inside describe()',
    );
  }
  if (each) suite.afterEach('useTestInfra: tear down', tearDown);
  else suite.afterAll('useTestInfra: tear down', tearDown);
}

async function setUp(state: State, options: TestInfraOptions): Promise<void> {
  const db = options.db ?? true;
  state.phase = 'up';
  // Created side by side; whatever did start is recorded, so the teardown stops it if the other failed.
  const results = await Promise.allSettled([
    db === false ? undefined : (db === 'empty' ? createEmptyDatabase() : createTestDatabase()).then((d) => (state.db = d)),
    options.nats ? startOwnNats(state) : undefined,
  ]);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A store directory of the block's own (kept by nats-server across a restart), removed in the teardown. */
async function startOwnNats(state: State): Promise<void> {
  state.storeDir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-test-nats-'));
  state.nats = await startTestNats({ storeDir: state.storeDir });
}

async function tearDown(state: State): Promise<void> {
  state.phase = 'down';
  const { db, nats, storeDir } = state;
  state.db = state.nats = state.storeDir = undefined;
  const results = await Promise.allSettled([nats?.stop(), db?.drop()]);
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

function ready<K extends 'db' | 'nats'>(state: State, key: K, wanted: boolean | 'empty'): NonNullable<State[K]> {
  if (!wanted) throw new Error(`useTestInfra: infra.${key} was not asked for (pass { ${key}: true })`);
  if (state.phase === 'defined') {
    throw new Error(
      `useTestInfra: infra.${key} was read before its before hook ran; read it inside a hook or test, and call useTestInfra() before the hooks that use it`,
    );
  }
  const value = state[key];
  if (state.phase === 'down' || !value) throw new Error(`useTestInfra: infra.${key} was read after the teardown (or its set-up failed)`);
  return value as NonNullable<State[K]>;
}

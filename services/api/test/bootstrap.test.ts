import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { eventually, spawnService, useTestInfra, type TestDatabase } from '@brokkr/testkit';
import { generatePak } from '@brokkr/pak';
import { ApiClient, spawnApi, type ApiProcess } from './support/index.ts';

const DEFAULT_PAK = 'brokkr_BR3rVsDa_GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8';

async function count(sql: pg.Pool, query: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(`SELECT (${query})::int AS n`);
  return rows[0]!.n;
}

describe('api first start (bootstrap)', () => {
  // Every test starts from a fresh database (first starts are what is tested) and NATS server.
  const infra = useTestInfra({ nats: true, each: true });
  let tmp: string;
  const processes: ApiProcess[] = [];
  const pools: pg.Pool[] = [];

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'brokkr-api-boot-'));
  });

  afterEach(async () => {
    await Promise.allSettled(processes.splice(0).map((p) => p.service.stop()));
    await Promise.allSettled(pools.splice(0).map((p) => p.end()));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  function database(db: TestDatabase = infra.db) {
    const sql = new pg.Pool({ connectionString: db.url, max: 2 });
    pools.push(sql);
    return { db, sql };
  }

  async function start(dbUrl: string, env: Record<string, string>): Promise<ApiProcess> {
    const p = await spawnApi({ BROKKR__DATABASE__URL: dbUrl, BROKKR__NATS__URL: infra.nats.url, ...env });
    processes.push(p);
    return p;
  }

  it('mints an admin PAK when PAK_HASH is empty: written 0600 to its file, never to the log, and it works; a restart keeps it', async () => {
    const { db, sql } = database();
    const pakFile = path.join(tmp, 'nested', 'dir', 'key.txt');
    const env = { BROKKR__BROKER__PAK_HASH: '', BROKKR__BROKER__PAK_FILE: pakFile };
    const first = await start(db.url, env);
    const pak = await readFile(pakFile, 'utf8');
    expect(pak).to.match(/^brokkr_BR\w+_\w+$/);
    expect(first.service.output()).to.not.include(pak).and.not.include(pak.split('_')[2]!);
    expect((await stat(pakFile)).mode & 0o777).to.equal(0o600);
    expect((await new ApiClient(first.url, pak).post('/auth/pak')).body.admin).to.equal(true);

    await first.service.stop();
    const second = await start(db.url, env);
    expect(await readFile(pakFile, 'utf8')).to.equal(pak);
    expect((await new ApiClient(second.url, pak).post('/auth/pak')).body.admin).to.equal(true);
    expect(await count(sql, 'SELECT count(*) FROM admin_role')).to.equal(1);
    expect(await count(sql, "SELECT count(*) FROM generators WHERE name = 'admin-generator'")).to.equal(1);
    expect(await count(sql, 'SELECT count(*) FROM generators WHERE is_system')).to.equal(1);
    expect(await count(sql, 'SELECT count(*) FROM app_initialization')).to.equal(1);
  });

  it('never writes the minted PAK through a symlink or over an existing file: exit 1, nothing stored, the next start mints', async () => {
    const { db, sql } = database();
    const dir = path.join(tmp, 'planted');
    await mkdir(dir, { recursive: true });
    const target = path.join(dir, 'where-an-attacker-reads.txt');
    await writeFile(target, 'planted');
    const link = path.join(dir, 'key.txt');
    await symlink(target, link);
    for (const pakFile of [link, target]) {
      const service = await spawnService({
        service: 'api',
        env: {
          BROKKR__DATABASE__URL: db.url,
          BROKKR__NATS__URL: infra.nats.url,
          BROKKR__BROKER__PAK_HASH: '',
          BROKKR__BROKER__PAK_FILE: pakFile,
        },
      });
      expect(await service.exited).to.equal(1);
      expect(service.output()).to.include(
        `BROKKR__BROKER__PAK_FILE ${pakFile}: the minted admin PAK was not stored because it already exists`,
      );
    }
    expect(await readFile(target, 'utf8')).to.equal('planted');
    expect(await count(sql, 'SELECT count(*) FROM admin_role')).to.equal(0);
    // The first start was rolled back: with a usable path the next start is the first one.
    const fresh = path.join(dir, 'fresh', 'key.txt');
    const p = await start(db.url, { BROKKR__BROKER__PAK_HASH: '', BROKKR__BROKER__PAK_FILE: fresh });
    expect((await new ApiClient(p.url, await readFile(fresh, 'utf8')).post('/auth/pak')).body.admin).to.equal(true);
  });

  it('stores a configured hash on the first start only; later starts never touch admin_role', async () => {
    const { db, sql } = database();
    const a = generatePak();
    const b = generatePak();
    const first = await start(db.url, { BROKKR__BROKER__PAK_HASH: a.hash.toUpperCase() });
    expect((await new ApiClient(first.url, a.pak).post('/auth/pak')).body.admin).to.equal(true);
    const { rows } = await sql.query("SELECT pak_hash, description, is_system FROM generators WHERE name = 'admin-generator'");
    expect(rows[0]).to.deep.equal({ pak_hash: a.hash, description: 'Linked to Admin PAK', is_system: false });
    await first.service.stop();

    const second = await start(db.url, { BROKKR__BROKER__PAK_HASH: b.hash });
    expect((await new ApiClient(second.url, a.pak).post('/auth/pak')).body.admin).to.equal(true);
    expect((await new ApiClient(second.url, b.pak).post('/auth/pak')).status).to.equal(401);
  });

  it("warns about Brokkr's public default admin hash and exposes it as a gauge", async () => {
    const { db } = database();
    const p = await start(db.url, { BROKKR__BROKER__PAK_HASH: '4c697273df3d764cba950bb5c04368097685f09259f5bd880d892cf1ff9f4cdd' });
    expect(p.service.output()).to.include('SECURITY WARNING');
    const metrics = await new ApiClient(p.url, null).get('//metrics');
    expect(metrics.text).to.match(/brokkr_default_admin_pak_hash_in_use\{[^}]*\} 1/);
    expect((await new ApiClient(p.url, DEFAULT_PAK).post('/auth/pak')).body.admin).to.equal(true);
  });

  it('registers every agent with __system__ at each start', async () => {
    const { db, sql } = database();
    const first = await start(db.url, { BROKKR__BROKER__PAK_HASH: generatePak().hash });
    await sql.query("INSERT INTO agents (name, cluster_name) VALUES ('late-agent', 'c'), ('gone-agent', 'c')");
    await sql.query("UPDATE agents SET deleted_at = now() WHERE name = 'gone-agent'");
    await first.service.stop();
    await start(db.url, { BROKKR__BROKER__PAK_HASH: generatePak().hash });
    const registered = await count(
      sql,
      `SELECT count(*) FROM agent_generator_registrations r JOIN generators g ON g.id = r.generator_id
        WHERE g.is_system AND r.agent_id IN (SELECT id FROM agents WHERE name IN ('late-agent', 'gone-agent'))`,
    );
    expect(registered).to.equal(2);
  });

  it('exits 1 with one readable message on invalid configuration', async () => {
    const service = await spawnService({ service: 'api', env: { BROKKR__BROKER__PAK_HASH: 'not-hex', BROKKR__BROKER__PORT: 'abc' } });
    await eventually(() => service.child.exitCode !== null, { what: 'api exit' });
    expect(service.child.exitCode).to.equal(1);
    expect(service.output()).to.include('BROKKR__BROKER__PAK_HASH');
    expect(service.output()).to.include('BROKKR__BROKER__PORT');
    expect(service.output()).to.not.match(/\n\s+at /);
  });

  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const { db } = database();
    const admin = generatePak();
    const p = await start(db.url, { BROKKR__BROKER__PAK_HASH: admin.hash });
    let sendRest: () => void = () => undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name": "slow-'));
        sendRest = () => {
          controller.enqueue(new TextEncoder().encode('upload"}'));
          controller.close();
        };
      },
    });
    const pending = fetch(`${p.url}/api/v1/generators`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.pak}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    // The request is being read; now ask the process to stop.
    await eventually(async () => (await new ApiClient(p.url, null).get('//metrics')).text.includes('brokkr_http_requests_total'));
    const exited = p.service.stop('SIGTERM');
    // The handler logs this and closes the listener in the same tick: the request is now in a draining server.
    await eventually(() => p.service.output().includes('shutting down: draining in-flight work'), { what: 'the api to start draining' });
    sendRest();
    const res = await pending;
    expect(res.status).to.equal(201);
    expect(await exited).to.equal(0);
    expect(p.service.output()).to.include('api stopped');
  });

  describe('on an empty database', () => {
    // Its teardown runs after the outer afterEach has stopped the processes.
    const empty = useTestInfra({ db: 'empty' });

    it('two apis starting at once against an empty database both come up with one admin role and one admin-generator', async () => {
      const { db, sql } = database(empty.db);
      const pakFile = path.join(tmp, 'race', 'key.txt');
      const env = { BROKKR__BROKER__PAK_HASH: '', BROKKR__BROKER__PAK_FILE: pakFile };
      const [one, two] = await Promise.all([start(db.url, env), start(db.url, env)]);
      const minted = [one!, two!].filter((p) => p.service.output().includes('admin PAK minted and written to its file'));
      expect(minted).to.have.length(1);
      const pak = await readFile(pakFile, 'utf8');
      for (const p of [one!, two!]) expect((await new ApiClient(p.url, pak).post('/auth/pak')).body.admin).to.equal(true);
      expect(await count(sql, 'SELECT count(*) FROM admin_role')).to.equal(1);
      expect(await count(sql, "SELECT count(*) FROM generators WHERE name = 'admin-generator'")).to.equal(1);
      expect(await count(sql, 'SELECT count(*) FROM generators WHERE is_system')).to.equal(1);
    });
  });
});

import { expect } from 'chai';
import pg from 'pg';
import { createLogger } from '@brokkr/logger';
import {
  RENDER_DONE_CHANNEL,
  claimRenderJobs,
  deleteAbandonedRenderJobs,
  deleteUnwaitedRenderJob,
  joinRenderJob,
  leaveRenderJob,
  listenChannel,
  liveRendererVersion,
  recordRenderResult,
  registerRenderer,
  releaseRenderClaims,
  renderJobKey,
  renderJobResult,
  unregisterRenderer,
  type ClaimOptions,
  type RenderJobSpec,
} from '@brokkr/render-jobs';
import { eventually, useTestInfra } from '@brokkr/testkit';

const V1 = 'brokkr-render 1.0.0+aaaa';
const V2 = 'brokkr-render 1.1.0+bbbb';

const chart = (n: number): RenderJobSpec => ({
  kind: 'helm',
  digest: `sha256:${String(n).padStart(64, '0')}`,
  values: { replicas: n },
  release: { name: 'shop', namespace: 'default' },
});

/**
 * The render-job queue's transitions (@brokkr/render-jobs) against a real PostgreSQL: what the api
 * does (join, leave) and what renderers do (claim with a lease, record a result fenced on it,
 * release), and the renderer registry the api reads.
 */
describe('render jobs: claims, leases and results', () => {
  const infra = useTestInfra();
  let db: pg.Pool;

  before(() => {
    db = new pg.Pool({ connectionString: infra.db.url, max: 6 });
  });
  after(async () => {
    await db?.end();
  });
  afterEach(async () => {
    await db.query('DELETE FROM render_jobs');
    await db.query('DELETE FROM renderers');
  });

  const queue = async (tenant: string, spec: RenderJobSpec, version = V1) => {
    const key = renderJobKey(version, tenant, spec);
    return { key, joined: await joinRenderJob(db, { key, tenant, rendererVersion: version, spec }) };
  };
  const claim = (options: Partial<ClaimOptions> = {}) =>
    claimRenderJobs(db, { rendererVersion: V1, renderer: 'renderer-a', limit: 10, leaseSeconds: 15, ...options });
  const rowOf = async (key: string) =>
    (
      await db.query<{ status: string; waiters: number; attempts: number; claimed_by: string | null; lease_left: number | null }>(
        `SELECT status, waiters, attempts, claimed_by, extract(epoch FROM acquired_until - now())::float8 AS lease_left
           FROM render_jobs WHERE job_key = $1`,
        [key],
      )
    ).rows[0];

  it('identical jobs of one tenant share one row and its waiters; another tenant or version gets its own', async () => {
    const first = await queue('tenant-a', chart(1));
    const again = await queue('tenant-a', { ...chart(1), values: { replicas: 1 } });
    expect(again.key).to.equal(first.key);
    expect(first.joined.status).to.equal('pending');
    expect(await rowOf(first.key)).to.include({ status: 'pending', waiters: 2 });
    expect((await queue('tenant-b', chart(1))).key).to.not.equal(first.key);
    expect((await queue('tenant-a', chart(1), V2)).key).to.not.equal(first.key);
    expect(Number((await db.query('SELECT count(*) AS n FROM render_jobs')).rows[0].n)).to.equal(3);
  });

  it('claims pending jobs of its own version only, up to its limit, each with a lease, and none twice while leased', async () => {
    const jobs = [await queue('t', chart(1)), await queue('t', chart(2)), await queue('t', chart(3)), await queue('t', chart(4), V2)];
    const claimed = await claim({ limit: 2 });
    expect(claimed.map((c) => c.job_key)).to.deep.equal([jobs[0]!.key, jobs[1]!.key]);
    expect(claimed[0]).to.include({ tenant: 't', attempts: 1 });
    expect(claimed[0]!.job).to.deep.equal(chart(1));
    const stored = await rowOf(jobs[0]!.key);
    expect(stored).to.include({ status: 'running', claimed_by: 'renderer-a' });
    expect(stored!.lease_left).to.be.within(13, 15);
    const next = await claim({ renderer: 'renderer-b' });
    expect(next.map((c) => c.job_key)).to.deep.equal([jobs[2]!.key]);
    expect(await claim({ renderer: 'renderer-c' })).to.deep.equal([]);
    expect((await claim({ rendererVersion: V2 })).map((c) => c.job_key)).to.deep.equal([jobs[3]!.key]);
  });

  it("is fair between tenants: a tenant's burst waits behind itself, counting its jobs at work on any renderer", async () => {
    const burst = [];
    for (let i = 0; i < 5; i++) burst.push(await queue('flooder', chart(i)));
    const atWork = await claim({ limit: 2 });
    expect(atWork.map((c) => c.tenant)).to.deep.equal(['flooder', 'flooder']);
    const quiet = await queue('quiet', chart(1));
    const other = await queue('other', chart(1));
    // flooder has 2 at work: its next job's turn is 3, after quiet's and other's first (turn 1).
    const next = await claim({ limit: 3, renderer: 'renderer-b' });
    expect(next.map((c) => c.job_key)).to.deep.equal([quiet.key, other.key, burst[2]!.key]);
  });

  it('a job whose lease ran out is claimed again; the lost claim writes nothing, the new one writes and wakes the waiting api', async () => {
    const woken: string[] = [];
    const listener = listenChannel({
      url: infra.db.url,
      channel: RENDER_DONE_CHANNEL,
      applicationName: 'test',
      onNotify: (key) => woken.push(key),
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
    try {
      await eventually(() => listener.listening, { what: 'LISTEN' });
      const { key } = await queue('t', chart(1));
      // A lease of 0 s has run out by the next statement: the renderer "was killed".
      const [lost] = await claim({ leaseSeconds: 0 });
      const [taken] = await claim({ renderer: 'renderer-b' });
      expect(taken).to.include({ job_key: key, attempts: 2 });
      expect(await recordRenderResult(db, lost!, { ok: true, yaml: 'from the lost claim' })).to.equal(false);
      expect(await recordRenderResult(db, taken!, { ok: true, yaml: 'kind: ConfigMap\n' })).to.equal(true);
      expect(await recordRenderResult(db, taken!, { ok: true, yaml: 'written twice' })).to.equal(false);
      expect(await renderJobResult(db, key)).to.deep.equal({ ok: true, yaml: 'kind: ConfigMap\n' });
      await eventually(() => woken.includes(key), { what: `the ${RENDER_DONE_CHANNEL} notification` });
      expect(woken).to.deep.equal([key]);
    } finally {
      await listener.close();
    }
  });

  it('a failure is stored with its reason; a caller joining a done job gets its result at once', async () => {
    const { key } = await queue('t', chart(1));
    const [claimed] = await claim();
    await recordRenderResult(db, claimed!, { ok: false, error: 'lookup is not supported', reason: 'invalid' });
    const joined = (await queue('t', chart(1))).joined;
    expect(joined).to.include({ status: 'done', ok: false, error: 'lookup is not supported', reason: 'invalid' });
    expect(await rowOf(key)).to.include({ waiters: 2 });
  });

  it('the last waiter to leave deletes the job, whatever its state; one still waiting keeps it', async () => {
    const { key } = await queue('t', chart(1));
    await queue('t', chart(1));
    await claim();
    expect(await leaveRenderJob(db, key)).to.equal(1);
    await deleteUnwaitedRenderJob(db, key);
    expect(await rowOf(key)).to.include({ status: 'running', waiters: 1 });
    expect(await leaveRenderJob(db, key)).to.equal(0);
    await deleteUnwaitedRenderJob(db, key);
    expect(await rowOf(key)).to.equal(undefined);
    expect(await leaveRenderJob(db, key)).to.equal(undefined);
  });

  it('a stopping renderer releases its own claims, not those it lost to another renderer', async () => {
    const mine = await queue('t', chart(1));
    const lost = await queue('t', chart(2));
    await claim({ limit: 1 });
    await claim({ limit: 1, leaseSeconds: 0 });
    await claim({ renderer: 'renderer-b' });
    expect(await releaseRenderClaims(db, 'renderer-a')).to.equal(1);
    expect(await rowOf(mine.key)).to.include({ status: 'pending', claimed_by: null, attempts: 0 });
    expect(await rowOf(lost.key)).to.include({ status: 'running', claimed_by: 'renderer-b', attempts: 2 });
  });

  it('two renderers claiming at once never take the same job', async () => {
    for (let i = 0; i < 40; i++) await queue(`tenant-${i % 3}`, chart(i));
    const rounds = await Promise.all(Array.from({ length: 8 }, (_, i) => claim({ renderer: `renderer-${i % 2}`, limit: 5 })));
    const ids = rounds.flat().map((c) => c.id);
    expect(ids).to.have.length(40);
    expect(new Set(ids).size).to.equal(40);
  });

  it('deletes jobs older than anyone waits, and only those', async () => {
    const old = await queue('t', chart(1));
    const fresh = await queue('t', chart(2));
    await db.query("UPDATE render_jobs SET created_at = now() - interval '11 minutes' WHERE job_key = $1", [old.key]);
    expect(await deleteAbandonedRenderJobs(db)).to.equal(1);
    expect(await rowOf(old.key)).to.equal(undefined);
    expect(await rowOf(fresh.key)).to.not.equal(undefined);
  });

  it('the registry names the version of the newest live renderer; none once they unregister or fall silent', async () => {
    expect(await liveRendererVersion(db, 15)).to.equal(undefined);
    await registerRenderer(db, { id: 'old', version: V1, isolation: {}, concurrency: 2 });
    await db.query("UPDATE renderers SET started_at = now() - interval '1 hour'");
    await registerRenderer(db, { id: 'new', version: V2, isolation: {}, concurrency: 2 });
    expect(await liveRendererVersion(db, 15)).to.equal(V2);
    await unregisterRenderer(db, 'new');
    expect(await liveRendererVersion(db, 15)).to.equal(V1);
    await db.query("UPDATE renderers SET last_seen = now() - interval '16 seconds'");
    expect(await liveRendererVersion(db, 15)).to.equal(undefined);
    await registerRenderer(db, { id: 'old', version: V1, isolation: {}, concurrency: 2 });
    expect(await liveRendererVersion(db, 15)).to.equal(V1);
  });
});

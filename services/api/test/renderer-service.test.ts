import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { locateRenderer } from '@brokkr/render';
import {
  eventually,
  fixtureChartDir,
  spawnRenderer,
  startChartRepository,
  useTestInfra,
  type ChartRepository,
  type TestRenderer,
} from '@brokkr/testkit';
import { ApiClient, createGenerator, createStack, startTestApi, type ApiResponse, type TestApi } from './support/index.ts';

/**
 * The api renders charts through the renderer service (docs/adr/0046), and copes with it being
 * absent, stuck or killed: no renderer alive is a 503 renderer_unavailable before anything is
 * queued; a render not finished in BROKKR__BROKER__RENDER_WAIT_SECONDS is a 503 renderer_busy and
 * leaves no job behind; a renderer killed mid-render loses its job when its lease runs out, and
 * another renderer takes it and answers the waiting request.
 */
describe('api and the renderer service', function () {
  // The first run on a machine builds brokkr-render (minutes; cached afterwards).
  this.timeout(20 * 60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let repo: ChartRepository;
  let binary: string;
  const renderers: TestRenderer[] = [];

  before(async () => {
    [binary, repo] = await Promise.all([locateRenderer(), startChartRepository([fixtureChartDir('demo')])]);
    api = await startTestApi(infra, { env: { BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: 'true' } });
  });
  after(async () => {
    await Promise.allSettled(renderers.map((r) => r.kill()));
    await api?.stop();
    await repo?.close();
  });

  const tenant = async (): Promise<{ client: ApiClient; stack: string }> => {
    const { generator, client } = await createGenerator(api.admin);
    return { client, stack: (await createStack(client, { generator_id: generator.id })).id };
  };
  const postChart = (t: { client: ApiClient; stack: string }, greeting: string, client = t.client) =>
    client.post<{ code?: string; yaml_content?: string }>(`/stacks/${t.stack}/deployment-objects`, {
      source: { helm: { repository: repo.url, chart: 'demo', version: '0.1.0' } },
      values: { greeting },
    });
  const jobs = async () =>
    (await api.sql.query<{ status: string; attempts: number }>('SELECT status, attempts FROM render_jobs ORDER BY created_at')).rows;
  const codeOf = (res: ApiResponse) => [res.status, (res.body as { code?: string } | undefined)?.code];
  const renderer = async (rendererBinary: string, env: Record<string, string> = {}) => {
    const started = await spawnRenderer({ databaseUrl: infra.db.url, binary: rendererBinary, env });
    renderers.push(started);
    return started;
  };

  /** A brokkr-render that names the real one's version but never answers a job: a renderer stuck mid-render. */
  async function stuckBinary(): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-stuck-render-'));
    // The sandbox runs it as nobody, with no PATH.
    await chmod(dir, 0o755);
    const file = path.join(dir, 'brokkr-render');
    await writeFile(file, `#!/bin/sh\nif [ "$1" = "--version" ]; then exec ${binary} --version; fi\nexec /bin/sleep 30\n`);
    await chmod(file, 0o755);
    return file;
  }

  it('without a renderer, a chart is refused with 503 renderer_unavailable before anything is queued', async () => {
    const t = await tenant();
    const res = await postChart(t, 'nobody renders me');
    // renderer_unavailable, not renderer_busy: the registry said so, nothing waited for a renderer.
    expect(codeOf(res), res.text).to.deep.equal([503, 'renderer_unavailable']);
    expect(await jobs()).to.deep.equal([]);
    const plain = await t.client.post(`/stacks/${t.stack}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    expect(plain.status, plain.text).to.equal(201);
  });

  it('a render not done in time is 503 renderer_busy and leaves no job; a renderer killed mid-render loses the job to the next', async () => {
    const t = await tenant();
    // Stuck renders, a lease of 3 + 5 s: the renderer "hangs" until it is killed.
    const stuck = await renderer(await stuckBinary(), { BROKKR__RENDERER__TIMEOUT_SECONDS: '3', BROKKR__RENDERER__CONCURRENCY: '2' });
    const impatient = await api.spawnReplica({ BROKKR__BROKER__RENDER_WAIT_SECONDS: '1' });
    const busy = await postChart(t, 'too slow', new ApiClient(impatient.url, t.client.pak));
    expect(codeOf(busy), busy.text).to.deep.equal([503, 'renderer_busy']);
    await eventually(async () => (await jobs()).length === 0, { what: 'the job nobody waits for to be deleted' });

    // The api may have cached "no renderer" for a moment: it answers 503 renderer_unavailable until it sees one.
    const posted = eventually(
      async () => {
        const res = await postChart(t, 'rendered after all');
        return codeOf(res)[1] === 'renderer_unavailable' ? undefined : res;
      },
      { timeoutMs: 120_000, what: 'the chart POST' },
    );
    await eventually(async () => (await jobs())[0]?.status === 'running', { what: 'the stuck renderer to claim the job' });
    await stuck.kill();
    const next = await renderer(binary);
    const res = await posted;
    expect(res.status, res.text).to.equal(201);
    expect(res.body.yaml_content).to.contain('greeting: "rendered after all"');
    const metrics = await next.metrics();
    expect(metrics).to.match(/^brokkr_renderer_lease_takeovers_total\{[^}]*\} 1$/m);
    expect(metrics).to.match(/^brokkr_renderer_renders_total\{outcome="ok"[^}]*\} 1$/m);
    expect(await jobs()).to.deep.equal([]);

    // Stopped, it unregisters at once; the killed one stays in the registry until it has missed its heartbeats.
    const registered = async () => (await api.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM renderers')).rows[0]!.n;
    expect(await registered()).to.equal(2);
    expect(await next.stop()).to.equal(0);
    expect(await registered()).to.equal(1);
    const alive = async () =>
      (await api.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM renderers WHERE last_seen > now() - interval '15 seconds'"))
        .rows[0]!.n;
    await eventually(async () => (await alive()) === 0, { timeoutMs: 30_000, what: 'the killed renderer to fall silent' });
    // With none alive, the api refuses charts again instead of waiting for a renderer (once its cached answer expires).
    await eventually(async () => codeOf(await postChart(t, 'after the stop'))[1] === 'renderer_unavailable', {
      what: '503 renderer_unavailable',
    });
  });
});

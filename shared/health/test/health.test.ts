import { expect } from 'chai';
import { createDb, type Db } from '@brokkr/db';
import { connectBus, type Bus } from '@brokkr/bus';
import { createLogger } from '@brokkr/logger';
import { createMetricsRegistry, metricsFor } from '@brokkr/telemetry';
import { eventually, testOnlyBusSettings, useTestInfra } from '@brokkr/testkit';
import { natsCheck, pgCheck, runChecks, startHealthServer, type HealthServer } from '@brokkr/health';

const logger = createLogger({ service: 'health-test', level: 'silent' });

describe('@brokkr/health', () => {
  const infra = useTestInfra({ nats: true });
  let db: Db;
  let bus: Bus;
  let server: HealthServer;
  let shuttingDown = false;
  const registry = createMetricsRegistry({ service: 'health-test' });
  metricsFor(registry).counter({ name: 'brokkr_health_test_total', help: 'A counter for the test' }).inc();

  const get = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${server.port}${path}`, init);

  before(async () => {
    db = createDb({ url: infra.db.url, poolSize: 2 });
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'health-test', logger, drainTimeoutMs: 500 });
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      registry,
      checks: { postgres: pgCheck(db.pool), nats: natsCheck(bus.nc) },
      logger,
      cacheMs: 0,
      isShuttingDown: () => shuttingDown,
    });
  });

  after(async () => {
    await server?.close();
    await bus?.close();
    await db?.close();
  });

  it('reports the port it picked', () => {
    expect(server.port).to.be.greaterThan(0);
  });

  it('answers /healthz without touching dependencies', async () => {
    const res = await get('/healthz');
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('OK');
  });

  it('is ready when Postgres and NATS answer', async () => {
    const res = await get('/readyz');
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('Ready');
  });

  it('serves Prometheus text on /metrics', async () => {
    const res = await get('/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal(registry.contentType);
    const body = await res.text();
    expect(body).to.contain('brokkr_health_test_total{service="health-test"} 1');
    expect(body).to.contain('process_resident_memory_bytes');
  });

  it('answers 404 for anything else', async () => {
    expect((await get('/nope')).status).to.equal(404);
    expect((await get('/healthz', { method: 'POST' })).status).to.equal(404);
  });

  it('ignores a query string', async () => {
    expect((await get('/healthz?probe=1')).status).to.equal(200);
  });

  it('is not ready while shutting down', async () => {
    shuttingDown = true;
    try {
      const res = await get('/readyz');
      expect(res.status).to.equal(503);
      expect(await res.text()).to.equal('shutting down');
    } finally {
      shuttingDown = false;
    }
  });

  it('names a check that does not answer in time', async () => {
    const result = await runChecks(
      { fine: async () => undefined, stuck: () => new Promise<void>(() => undefined), broken: () => Promise.reject(new Error('boom')) },
      50,
    );
    expect(result.ok).to.equal(false);
    expect(result.failed).to.deep.equal({ stuck: 'no answer within 50 ms', broken: 'boom' });
  });

  // Last: it takes NATS away for the rest of the file.
  it('answers 503 naming NATS once the NATS server is gone', async () => {
    await infra.nats.stop();
    const body = await eventually(
      async () => {
        const res = await get('/readyz');
        return res.status === 503 ? res.text() : undefined;
      },
      { what: '/readyz to report 503' },
    );
    expect(body).to.equal('nats unavailable');
    expect((await get('/healthz')).status).to.equal(200);
  });

  it('close() can be called more than once: every call resolves and the port is closed', async () => {
    const extra = await startHealthServer({ port: 0, host: '127.0.0.1', registry, checks: {}, logger });
    const url = `http://127.0.0.1:${extra.port}/healthz`;
    // fetch keeps this connection alive afterwards, as a Prometheus scraper does: close() must not wait for it.
    expect((await fetch(url)).status, 'served before close').to.equal(200);
    const calls = await Promise.allSettled([extra.close(), extra.close()]);
    const after = await Promise.allSettled([extra.close()]);
    expect([...calls, ...after].map((c) => c.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled']);
    const refused = await fetch(url).then(
      () => 'answered',
      (err: Error & { cause?: { code?: string } }) => err.cause?.code,
    );
    expect(refused, 'nothing listens on the port any more').to.equal('ECONNREFUSED');
  });
});

import { expect } from 'chai';
import { freePort, spawnService, useTestInfra } from '@brokkr/testkit';

/**
 * The life of every hub service without an HTTP API: it starts from its environment, serves
 * /healthz, /readyz (Postgres and NATS checked; the 503 case is covered by @brokkr/health's tests)
 * and /metrics, and exits 0 on SIGTERM after draining.
 */
for (const service of ['webhook-dispatcher', 'maintenance', 'audit-writer']) {
  describe(`${service} lifecycle`, () => {
    const infra = useTestInfra({ nats: true });

    it('serves health and metrics, and exits 0 on SIGTERM', async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const running = await spawnService({
        service,
        env: { BROKKR__DATABASE__URL: infra.db.url, BROKKR__NATS__URL: infra.nats.url, BROKKR__HEALTH__PORT: String(port) },
        readyUrl: `${base}/readyz`,
      });
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.status).to.equal(200);
      expect(await metrics.text()).to.include('process_cpu_seconds_total');
      expect(await running.stop('SIGTERM')).to.equal(0);
    });

    it('refuses to start with a readable message naming every invalid variable', async () => {
      const running = await spawnService({
        service,
        env: { BROKKR__DATABASE__URL: 'not a url', BROKKR__HEALTH__PORT: 'abc', BROKKR__LOG__LEVEL: 'loud' },
      });
      expect(await running.exited).to.equal(1);
      const out = running.output();
      for (const name of ['BROKKR__DATABASE__URL', 'BROKKR__HEALTH__PORT', 'BROKKR__LOG__LEVEL']) expect(out).to.include(name);
    });
  });
}

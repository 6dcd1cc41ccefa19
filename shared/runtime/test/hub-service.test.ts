import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, freePort, spawnService, useTestInfra } from '@brokkr/testkit';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'tiny-service.ts');

const run = (env: Record<string, string>) => spawnService({ entry: fixture, env });

describe('runHubService', () => {
  const infra = useTestInfra({ nats: true });

  it('serves health, then on SIGTERM drains the work before closing and exits 0', async () => {
    const port = await freePort();
    const svc = await run({ BROKKR__DATABASE__URL: infra.db.url, BROKKR__NATS__URL: infra.nats.url, BROKKR__HEALTH__PORT: String(port) });
    await eventually(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok), { what: 'readyz' });
    expect(await svc.stop('SIGTERM')).to.equal(0);
    const out = svc.output();
    expect(out.indexOf('work drained')).to.be.greaterThan(-1);
    expect(out.indexOf('work drained')).to.be.lessThan(out.indexOf('stopped cleanly'));
  });

  it('exits 1 and logs the error when the work crashes with an unhandled rejection (no half-alive process)', async () => {
    const port = await freePort();
    const svc = await run({
      BROKKR__DATABASE__URL: infra.db.url,
      BROKKR__NATS__URL: infra.nats.url,
      BROKKR__HEALTH__PORT: String(port),
      TINY_CRASH: '1',
    });
    expect(await svc.exited).to.equal(1);
    expect(svc.output()).to.include('unhandled rejection: exiting').and.include('boom from the work');
  });

  it('exits 1 with a clear message when a dependency is unreachable at start', async () => {
    const port = await freePort();
    const svc = await run({
      BROKKR__DATABASE__URL: infra.db.url,
      BROKKR__NATS__URL: `nats://127.0.0.1:${await freePort()}`,
      BROKKR__HEALTH__PORT: String(port),
    });
    expect(await svc.exited).to.equal(1);
    expect(svc.output()).to.include('tiny failed to start');
  });
});

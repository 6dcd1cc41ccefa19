import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createTestCa, startNats, type NatsHandle, type TestCa } from '@brokkr/infra';
import { freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'tiny-service.ts');

/**
 * Every hub service reaches NATS through runHubService and @brokkr/bus (the api through the same
 * bus and @brokkr/config's natsSettingsFrom): a nats-server that demands a password or a client
 * certificate lets a service in with BROKKR__NATS__* and turns it away, with the server's reason,
 * without them.
 */
describe('NATS credentials and TLS (BROKKR__NATS__*)', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ db: true });
  const running: RunningService[] = [];
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-nats-security-'));
  });
  afterEach(async () => {
    await Promise.allSettled(running.splice(0).map((s) => s.stop()));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** Starts the tiny hub service; resolves once it is ready or has exited. */
  async function start(nats: NatsHandle, env: Record<string, string>): Promise<{ ready: boolean; service: RunningService }> {
    const port = await freePort();
    const service = await spawnService({
      entry: fixture,
      env: { BROKKR__DATABASE__URL: infra.db.url, BROKKR__NATS__URL: nats.url, BROKKR__HEALTH__PORT: String(port), ...env },
    });
    running.push(service);
    const ready = await Promise.race([
      service.exited.then(() => false),
      (async () => {
        for (;;) {
          if (
            await fetch(`http://127.0.0.1:${port}/readyz`).then(
              (r) => r.ok,
              () => false,
            )
          )
            return true;
          await new Promise((r) => setTimeout(r, 100));
        }
      })(),
    ]);
    return { ready, service };
  }

  describe('a server that requires a user and password', () => {
    let nats: NatsHandle;
    before(async () => (nats = await startNats({ auth: { user: 'brokkr', password: 's3cret-pw' } })));
    after(() => nats?.stop());

    it('lets a service in with BROKKR__NATS__USER and BROKKR__NATS__PASSWORD', async () => {
      const { ready, service } = await start(nats, { BROKKR__NATS__USER: 'brokkr', BROKKR__NATS__PASSWORD: 's3cret-pw' });
      expect(ready, service.output()).to.equal(true);
    });

    it('turns a service without them (or with a wrong password) away: exit 1, the server says why, no password in the log', async () => {
      const attempts: Record<string, string>[] = [{}, { BROKKR__NATS__USER: 'brokkr', BROKKR__NATS__PASSWORD: 'wrong-pw' }];
      for (const env of attempts) {
        const { ready, service } = await start(nats, env);
        expect(ready).to.equal(false);
        expect(await service.exited).to.equal(1);
        expect(service.output()).to.match(/cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*authorization violation/i);
        expect(service.output()).to.not.include('wrong-pw');
      }
    });

    it('the api reads the same variables: in with them, turned away without', async () => {
      const api = (env: Record<string, string>) =>
        freePort().then((port) =>
          spawnService({
            service: 'api',
            env: {
              BROKKR__DATABASE__URL: infra.db.url,
              BROKKR__NATS__URL: nats.url,
              BROKKR__BROKER__HOST: '127.0.0.1',
              BROKKR__BROKER__PORT: String(port),
              BROKKR__BROKER__PAK_HASH: 'ab'.repeat(32),
              ...env,
            },
            ...(env.BROKKR__NATS__USER ? { readyUrl: `http://127.0.0.1:${port}/readyz` } : {}),
          }),
        );
      const admitted = await api({ BROKKR__NATS__USER: 'brokkr', BROKKR__NATS__PASSWORD: 's3cret-pw' });
      running.push(admitted);
      expect(admitted.output()).to.include('connected to nats');
      const refused = await api({});
      running.push(refused);
      expect(await refused.exited).to.equal(1);
      expect(refused.output()).to.match(/cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*authorization violation/i);
    });

    it('refuses a half-given pair before connecting, naming both variables', async () => {
      const { ready, service } = await start(nats, { BROKKR__NATS__USER: 'brokkr' });
      expect(ready).to.equal(false);
      expect(await service.exited).to.equal(1);
      expect(service.output()).to.include('BROKKR__NATS__USER and BROKKR__NATS__PASSWORD: set both or neither');
    });
  });

  describe('a TLS server that verifies client certificates', () => {
    let ca: TestCa;
    let nats: NatsHandle;
    before(async () => {
      ca = await createTestCa(dir);
      nats = await startNats({ tls: { ...ca.server, clientCaFile: ca.caFile } });
    });
    after(() => nats?.stop());

    it('lets a service in with the CA, a client certificate and its key', async () => {
      const { ready, service } = await start(nats, {
        BROKKR__NATS__TLS_CA_FILE: ca.caFile,
        BROKKR__NATS__TLS_CERT_FILE: ca.client.certFile,
        BROKKR__NATS__TLS_KEY_FILE: ca.client.keyFile,
      });
      expect(ready, service.output()).to.equal(true);
    });

    it('turns away a service that does not know the CA, and one without a client certificate', async () => {
      // The server's certificate cannot be verified: the client says so.
      const unknownCa = await start(nats, {});
      expect(unknownCa.ready).to.equal(false);
      expect(await unknownCa.service.exited).to.equal(1);
      expect(unknownCa.service.output()).to.match(
        /cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: unable to verify the first certificate/,
      );
      // The server drops the handshake; the client only sees its connect timeout (20 s) run out.
      const noClientCert = await start(nats, { BROKKR__NATS__TLS_CA_FILE: ca.caFile });
      expect(noClientCert.ready).to.equal(false);
      expect(await noClientCert.service.exited).to.equal(1);
      expect(noClientCert.service.output()).to.match(/cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: timeout/);
    });
  });
});

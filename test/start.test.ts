import { expect } from 'chai';
import { freePort } from '@brokkr/testkit';
import { runStart } from './support/start-process.ts';

/**
 * `npm start -- --no-cluster` end to end: the hub comes up from nothing, the api answers /readyz
 * and the minted admin PAK works; Ctrl-C (SIGINT) stops everything, leaving no process and no
 * directory. (With the local cluster: first-deployment.test.ts.)
 */
describe('npm start --no-cluster', () => {
  it('serves /readyz, prints a working admin PAK, starts no cluster, and stops cleanly on SIGINT', async function () {
    this.timeout(120_000);
    const port = await freePort();
    const start = runStart(['--no-cluster'], { BROKKR__BROKER__PORT: String(port) });
    const pak = (await start.waitFor(/admin PAK: (brokkr_\S+)/, 60_000))[1] ?? '';
    await start.waitFor(/local cluster: off/, 10_000);

    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).to.equal(200);
    const whoami = await fetch(`http://127.0.0.1:${port}/api/v1/auth/pak`, { method: 'POST', headers: { authorization: `Bearer ${pak}` } });
    expect(await whoami.json()).to.include({ admin: true });

    const pid = start.child.pid;
    const { code, leaked, processes } = await start.interrupt();
    expect(code).to.equal(0);
    expect(processes).to.not.include('scripts/start.ts');
    expect(processes).to.not.match(new RegExp(`guard\\.sh ${pid} `));
    expect(start.output()).to.not.include('kube-apiserver');
    expect(leaked, 'temporary directories left behind').to.deep.equal([]);
  });
});

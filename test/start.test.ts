import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@brokkr/testkit';


/**
 * `npm start` end to end: the whole hub comes up from nothing, the api answers /readyz and the
 * minted admin PAK works; Ctrl-C (SIGINT) stops everything, leaving no process and no directory.
 */
describe('npm start', () => {
  it('serves /readyz, prints a working admin PAK, and stops cleanly on SIGINT', async function () {
    this.timeout(120_000);
    // A temp root of its own: whatever the start script creates lands here and must be gone after.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'start-test-'));
    fs.chmodSync(tmp, 0o755); // PostgreSQL runs as nobody when we are root and must reach its directory.
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, BROKKR__BROKER__PORT: String(port) };
    delete env.BROKKR__DATABASE__URL;
    delete env.BROKKR__NATS__URL;
    delete env.BROKKR__BROKER__PAK_HASH;
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', 'scripts/start.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const deadline = Date.now() + 60_000;
    while (!/admin PAK: (brokkr_\S+)/.test(out)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${out.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).to.equal(200);
    const pak = /admin PAK: (brokkr_\S+)/.exec(out)?.[1] ?? '';
    const whoami = await fetch(`http://127.0.0.1:${port}/api/v1/auth/pak`, { method: 'POST', headers: { authorization: `Bearer ${pak}` } });
    expect(await whoami.json()).to.include({ admin: true });

    child.kill('SIGINT');
    expect(await exited).to.equal(0);
    const ps = execSync('ps -eo args').toString();
    expect(ps).to.not.include('scripts/start.ts');
    expect(ps).to.not.match(new RegExp(`guard\\.sh ${child.pid} `));
    // (tsx keeps its compile cache there too; only our own directories count.)
    const leaked = fs.readdirSync(tmp).filter((n) => n.startsWith('brokkr-'));
    fs.rmSync(tmp, { recursive: true, force: true });
    expect(leaked, 'temporary directories left behind').to.deep.equal([]);
  });
});

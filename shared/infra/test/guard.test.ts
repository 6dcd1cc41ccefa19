import { expect } from 'chai';
import { spawn, execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGuarded, startNats, startPostgres } from '../src/index.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const running = (port: number) => execSync('ps -eo args').toString().includes(`-p ${port} `);

describe('throwaway servers', () => {
  it('start, answer and stop, removing their directories', async () => {
    const pg = await startPostgres();
    const nats = await startNats();
    expect(pg.url).to.match(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(nats.url).to.match(/^nats:\/\/127\.0\.0\.1:\d+$/);
    await Promise.all([pg.stop(), nats.stop()]);
    expect(existsSync(pg.dir ?? '')).to.equal(false);
    expect(existsSync(nats.dir ?? '')).to.equal(false);
  });

  it('use the given URL instead of starting anything', async () => {
    const pg = await startPostgres({ url: 'postgres://elsewhere/db' });
    const nats = await startNats({ url: 'nats://elsewhere:4222' });
    expect(pg).to.include({ url: 'postgres://elsewhere/db', external: true });
    expect(nats).to.include({ url: 'nats://elsewhere:4222', external: true });
    await pg.stop();
    await nats.stop();
  });

  it('do not outlive a starter that is killed with SIGKILL', async () => {
    // A separate process starts a nats-server and PostgreSQL, prints their ports and directories,
    // then waits to be killed; nothing in it can react to SIGKILL, so only the guard can clean up.
    const starter = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=development', path.join(here, 'fixtures', 'start-and-wait.ts')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    starter.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await until(() => out.includes('\n'), 'the starter to report');
    const { natsPort, natsDir, pgPort, pgDir } = JSON.parse(out.trim()) as Record<string, string>;
    expect(running(Number(natsPort))).to.equal(true);
    starter.kill('SIGKILL');
    await until(() => !running(Number(natsPort)) && !running(Number(pgPort)), 'the servers to stop');
    await until(() => !existsSync(natsDir ?? '') && !existsSync(pgDir ?? ''), 'the directories to go');
  });

  it('are asked to stop with SIGINT, or with the signal they were given (kube-controller-manager stops on SIGTERM only)', async () => {
    // A server that says which signal reached it, then exits.
    const server = [
      "for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { console.log('got ' + s); process.exit(0); });",
      "console.log('ready'); setInterval(() => {}, 1000);",
    ].join(' ');
    for (const [stopSignal, expected] of [
      [undefined, 'got SIGINT'],
      ['SIGTERM', 'got SIGTERM'],
    ] as const) {
      const lines: string[] = [];
      const guarded = startGuarded({
        command: process.execPath,
        args: ['-e', server],
        onOutput: (line) => lines.push(line),
        ...(stopSignal ? { stopSignal } : {}),
      });
      await until(() => lines.includes('ready'), 'the server to start');
      await guarded.stop();
      expect(lines).to.deep.equal(['ready', expected]);
    }
  });
});

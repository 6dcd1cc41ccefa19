import { expect } from 'chai';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRenderer, DEFAULT_LIMITS, type RenderResult, type Renderer } from '../src/index.ts';
import { runJob } from '../src/run-job.ts';
import { probeSandbox, type Sandbox } from '../src/sandbox.ts';
import { chartArchive } from './fixtures/archive.ts';
import { testRenderer } from './fixtures/renderer.ts';

/**
 * A stand-in for brokkr-render, started exactly as the renderer is (runJob: the sandbox's command
 * line, an empty environment, a fresh working directory): it reports what it can see and do
 * instead of rendering — its user, working directory, environment, whether it can write a file,
 * and whether it can connect to a listener on this machine's loopback.
 */
function spyScript(port: number, probeFile: string): string {
  return `#!/bin/bash
cat >/dev/null
net=$( (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo connected || echo refused)
wrote=$( (echo secret >'${probeFile}') 2>/dev/null && echo wrote || echo refused)
env_count=$(tr '\\0' '\\n' </proc/$$/environ | grep -c .)
printf '{"ok":true,"yaml":"uid=%s cwd-entries=%s env=%s write=%s net=%s"}' "$(id -u)" "$(ls -A | wc -l)" "$env_count" "$wrote" "$net"
`;
}

async function listener(): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, connections: () => count };
}

const report = (result: RenderResult) => (result.ok ? result.yaml : `failed: ${result.error}`);

describe('@brokkr/render: the sandbox around each renderer process', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await probeSandbox();
  });

  it('on this machine (root) runs each process as nobody in a network namespace of its own', () => {
    expect(sandbox.isolation).to.deep.equal({ network: 'namespace', user: 'nobody' });
  });

  it('a process started like a renderer runs as nobody in an empty directory with no environment, writes no file and reaches no network — the same program outside the sandbox does', async () => {
    const local = await listener();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-spy-'));
    // nobody must be able to run the spy and try to write next to it.
    await chmod(dir, 0o777);
    const spy = path.join(dir, 'spy.sh');
    const probeFile = path.join(dir, 'written');
    await writeFile(spy, spyScript(local.port, probeFile), { mode: 0o755 });
    try {
      const inside = report(await runJob({ sandbox, binary: spy, limits: DEFAULT_LIMITS }, { kind: 'helm', archive: Buffer.alloc(0) }));
      expect(inside).to.equal('uid=65534 cwd-entries=0 env=0 write=refused net=refused');
      expect(local.connections()).to.equal(0);

      const bare: Sandbox = { isolation: sandbox.isolation, command: (binary) => ({ file: binary, args: [] }) };
      const outside = report(
        await runJob({ sandbox: bare, binary: spy, limits: DEFAULT_LIMITS }, { kind: 'helm', archive: Buffer.alloc(0) }),
      );
      expect(outside).to.equal('uid=0 cwd-entries=0 env=0 write=wrote net=connected');
      expect(local.connections()).to.equal(1);
    } finally {
      local.server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('@brokkr/render: a renderer that cannot start or is closed', function () {
  this.timeout(120_000);

  it('close() kills the render at work and refuses what waits: both callers get "the renderer is closed"', async () => {
    const renderer = await testRenderer({ concurrency: 1, limits: { cpuSeconds: 60, timeoutMs: 90_000 } });
    const spin = {
      kind: 'helm' as const,
      archive: chartArchive('spin', { 'templates/x.yaml': '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}' }),
    };
    const outcome = (p: Promise<RenderResult>) =>
      p.then(
        (r) => `resolved ${JSON.stringify(r)}`,
        (err: Error) => err.message,
      );
    const atWork = outcome(renderer.render('t', spin));
    const waiting = outcome(renderer.render('t', spin));
    await renderer.close();
    expect(await atWork).to.equal('the renderer is closed');
    expect(await waiting).to.equal('the renderer is closed');
  });

  it('rejects rather than blaming the job: a missing binary, in the sandbox or not, and createRenderer over it', async () => {
    const sandbox = await probeSandbox();
    const job = { kind: 'helm' as const, archive: Buffer.alloc(0) };
    for (const s of [sandbox, { isolation: sandbox.isolation, command: (file: string) => ({ file, args: [] }) }]) {
      const outcome = await runJob({ sandbox: s, binary: '/nonexistent/brokkr-render', limits: DEFAULT_LIMITS }, job).then(
        (result) => `resolved ${JSON.stringify(result)}`,
        (err: Error) => err.message,
      );
      expect(outcome).to.match(/^the renderer could not be started: /);
    }
    const created = await createRenderer({ binary: '/nonexistent/brokkr-render', log: () => undefined }).then(
      () => 'created',
      (err: Error) => err.message,
    );
    expect(created).to.match(/ENOENT/);
  });
});

describe('@brokkr/render: fair between tenants', function () {
  this.timeout(120_000);
  let renderer: Renderer;
  const slow = {
    kind: 'helm' as const,
    archive: chartArchive('slow', { 'templates/x.yaml': '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}' }),
  };
  const quick = {
    kind: 'helm' as const,
    archive: chartArchive('quick', { 'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: quick\n' }),
  };

  before(async () => {
    // One process at a time, each slow render stopped by its 1 s of CPU; two jobs may wait per tenant.
    renderer = await testRenderer({ concurrency: 1, maxQueuedPerTenant: 2, limits: { cpuSeconds: 1, timeoutMs: 10_000 } });
  });
  after(() => renderer.close());

  it("one tenant's queue of slow renders does not hold another tenant's render behind it; past its share the flooder is busy, the other tenant is not", async () => {
    const finished: string[] = [];
    const track = (name: string, p: Promise<RenderResult>) => p.then((r) => (finished.push(name), r));
    // slow-1 goes to work at once, slow-2 and slow-3 fill the flooder's share, slow-4 is one too many.
    const flood = [1, 2, 3, 4].map((i) => track(`slow-${i}`, renderer.render('flooder', slow)));
    const neighbour = track('quick', renderer.render('neighbour', quick));
    const results = await Promise.all([...flood, neighbour]);

    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).to.deep.equal(['limit', 'limit', 'limit', 'busy', 'ok']);
    // The flooder's queue was there first, so slow-2 may go before the neighbour; slow-3 may not.
    expect(finished.indexOf('quick')).to.be.lessThan(finished.indexOf('slow-3'));
  });
});

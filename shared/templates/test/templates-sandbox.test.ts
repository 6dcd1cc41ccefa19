import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createTemplateRenderer, type TemplateRenderer } from '../src/renderer.ts';
import type { Job } from '../src/jobs.ts';
import { spawnSandboxed } from '../src/sandbox.ts';

/**
 * Defence in depth: even if a template found a way to run JavaScript, the renderer process it
 * runs in cannot touch the host (sandbox.ts + lockdown.ts). The engine has no such hole to use,
 * so a fixture stands in for one: it runs arbitrary code in a process started and locked down
 * exactly as the renderer's are. Then the renderer's fairness between tenants.
 */

interface Report {
  results: Record<string, string>;
  envKeys: string[];
}

function runEscapeFixture(probe: { canaryFile: string; port: number }): Promise<Report> {
  const child = spawnSandboxed(new URL('./fixtures/sandbox-escape.ts', import.meta.url), 64);
  return new Promise((resolve, reject) => {
    child.on('message', (message: { ready?: true } & Report) => {
      if (message.ready) child.send(probe);
      else {
        resolve(message);
        child.kill();
      }
    });
    child.on('exit', (code) => reject(new Error(`the sandboxed fixture exited (${code}) before reporting`)));
  });
}

describe('template renderer: the sandbox around a renderer process', () => {
  let dir: string;
  let server: Server;
  let connections = 0;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'brokkr-sandbox-'));
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('code running in a renderer process reads no file, writes nothing, starts nothing, reaches no network and sees no environment', async () => {
    const canaryFile = path.join(dir, 'canary');
    const port = (server.address() as { port: number }).port;
    const report = await runEscapeFixture({ canaryFile, port });
    const allowed = Object.entries(report.results).filter(([, outcome]) => outcome === 'ALLOWED');
    expect(allowed, JSON.stringify(report.results, null, 2)).to.deep.equal([]);
    expect(Object.keys(report.results)).to.have.length.greaterThan(10);
    expect(report.envKeys).to.deep.equal([]);
    expect(existsSync(canaryFile)).to.equal(false);
    expect(connections).to.equal(0);
  });
});

describe('template renderer: fair between tenants', () => {
  let renderer: TemplateRenderer;
  const render = (templateContent: string): Job => ({
    kind: 'render',
    templateContent,
    parametersSchema: '{}',
    parameters: {},
    maxOutputChars: 10_000,
  });
  // Runs until its deadline: the slowest a tenant's template can be.
  const endless = render('{% for a in range(end=100000) %}{% for b in range(end=100000) %}{% endfor %}{% endfor %}');

  beforeEach(() => {
    renderer = createTemplateRenderer({ processes: 2, deadlineMs: 1_500, maxQueuedPerTenant: 6 });
  });
  afterEach(() => renderer.close());

  it("one tenant's queue of slow templates does not hold another tenant's render behind it", async () => {
    const finished: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then(() => finished.push(name));
    const slow = Array.from({ length: 6 }, (_v, i) => track(`a${i + 1}`, renderer.run(endless, 'tenant-a')));
    const quick = track('b', renderer.run(render('b: 1'), 'tenant-b'));
    await Promise.all([...slow, quick]);
    // Two processes: a1 and a2 (or a1 and b) run first; b never waits for more than the jobs already running.
    expect(finished.indexOf('b'), finished.join(' ')).to.be.lessThan(3);
  });

  it("a tenant that fills its share of the queue is refused (503), and another tenant's job is still taken", async () => {
    const running = Array.from({ length: 6 }, () => renderer.run(endless, 'tenant-a'));
    const over = await renderer.run(endless, 'tenant-a').then(
      () => 'accepted',
      (err: Error) => err.name,
    );
    expect(over).to.equal('TemplateRendererBusy');
    const other = await renderer.run(render('b: {{ 1 + 1 }}'), 'tenant-b');
    expect(other).to.deep.equal({ ok: true, output: 'b: 2' });
    await Promise.all(running);
  });
});

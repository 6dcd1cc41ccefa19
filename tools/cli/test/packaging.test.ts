import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { repoRoot } from '@brokkr/infra';

const run = promisify(execFile);
const cliDir = path.join(repoRoot, 'tools', 'cli');

/**
 * The CLI reaches users two ways besides this workspace: `npx brokkr` right after `npm ci` (the
 * launcher, bin/brokkr.js, runs the sources when nothing is built) and as a standalone package
 * (`npm pack` bundles every dependency into dist/brokkr.mjs, so the tarball installs with no
 * registry access to the workspace packages).
 */
describe('brokkr CLI packaging', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-cli-pack-'));
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  it('the launcher answers --help whatever is built (npx brokkr)', async () => {
    const { stdout } = await run(process.execPath, [path.join(cliDir, 'bin', 'brokkr.js'), '--help'], { cwd: repoRoot });
    expect(stdout).to.match(/^Usage: brokkr/);
    expect(stdout).to.include('rollout');
  });

  it('npm pack yields a tarball that installs on its own and runs', async () => {
    const { stdout } = await run('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: cliDir });
    const tarball = path.join(dir, stdout.trim().split('\n').at(-1)!);
    const install = path.join(dir, 'install');
    await fs.mkdir(install);
    await fs.writeFile(path.join(install, 'package.json'), '{"name":"try-brokkr","version":"1.0.0","private":true}\n');
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: install });
    const bin = path.join(install, 'node_modules', '.bin', 'brokkr');
    const help = await run(bin, ['--help'], { cwd: install, env: { PATH: process.env.PATH ?? '' } });
    expect(help.stdout).to.match(/^Usage: brokkr/);
    const installed = JSON.parse(await fs.readFile(path.join(install, 'node_modules', '@brokkr', 'cli', 'package.json'), 'utf8')) as {
      dependencies?: object;
    };
    expect(installed.dependencies ?? {}, 'a packed CLI needs nothing from the registry').to.deep.equal({});
    // The bundle is removed after packing, so the workspace keeps running what it builds.
    const left = await fs.access(path.join(cliDir, 'dist', 'brokkr.mjs')).then(
      () => true,
      () => false,
    );
    expect(left).to.equal(false);
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { repoRoot } from '@brokkr/infra';

/**
 * The tiers hold a file's name to what it starts (shared/testkit/src/tier.ts): mocha runs of the
 * fixtures in shared/testkit/fixtures/tiers/, with the full tier's global fixture or the fast
 * tier's set-up, as .mocharc.cjs and .mocharc.fast.cjs load them.
 */
const fixture = (name: string) => path.join(repoRoot, 'shared/testkit/fixtures/tiers', name);
const setUp = { full: 'shared/testkit/src/global-fixture.ts', fast: 'shared/testkit/src/fast-tier.ts' };

function runMocha(tier: keyof typeof setUp, file: string): Promise<{ code: number; output: string }> {
  const args = ['--no-config', '--node-option', 'import=tsx', '--node-option', 'conditions=development'];
  args.push('--require', path.join(repoRoot, setUp[tier]), '--reporter', 'dot', '--exit', file);
  const mocha = path.join(repoRoot, 'node_modules/mocha/bin/mocha.js');
  const env = { ...process.env, BROKKR_TEST_TIER: '', BROKKR_TEST_TIMES: '' };
  return new Promise((resolve) => {
    execFile(process.execPath, [mocha, ...args], { cwd: repoRoot, env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('test tiers: a file in the wrong tier fails the run', function () {
  this.timeout(120_000);

  it('the full tier: a file named *.test.ts that starts nothing fails the run, naming the rename', async () => {
    const run = await runMocha('full', fixture('pure.test.ts'));
    expect(run.output).to.include('1 passing');
    expect(run.output).to.include('shared/testkit/fixtures/tiers/pure.test.ts starts no infrastructure: name it *.unit.test.ts');
    expect(run.code).to.not.equal(0);
  });

  it('the full tier: a *.unit.test.ts that starts a child process fails the run, naming what it started', async () => {
    const run = await runMocha('full', fixture('spawns.unit.test.ts'));
    expect(run.output).to.include('1 passing');
    expect(run.output).to.include('shared/testkit/fixtures/tiers/spawns.unit.test.ts starts child process true: name it *.test.ts');
    expect(run.code).to.not.equal(0);
  });

  it('the fast tier: the child process is refused, and the error says where the test belongs', async () => {
    const run = await runMocha('fast', fixture('spawns.unit.test.ts'));
    expect(run.output).to.include('1 failing');
    expect(run.output).to.include('child process true: the fast tier (npm run test:fast) starts no infrastructure and no child process');
    expect(run.output).to.include('name its file *.test.ts, not *.unit.test.ts');
    expect(run.code).to.not.equal(0);
  });

  it('the fast tier: a file that calls useTestInfra fails as it loads, before any test runs', async () => {
    const run = await runMocha('fast', fixture('infra.unit.test.ts'));
    expect(run.output).to.include('useTestInfra(): the fast tier (npm run test:fast) starts no infrastructure');
    expect(run.output).to.not.include('passing');
    expect(run.code).to.not.equal(0);
  });

  it('the fast tier: a file that starts nothing passes', async () => {
    const run = await runMocha('fast', fixture('pure.test.ts'));
    expect(run.output).to.include('1 passing');
    expect(run.code).to.equal(0);
  });
});

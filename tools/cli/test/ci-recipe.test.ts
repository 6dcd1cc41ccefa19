import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { repoRoot } from '@brokkr/infra';
import { eventually, useTestInfra, type RunningService, type TestClient } from '@brokkr/testkit';
import {
  buildCli,
  CLI,
  configMap,
  createActiveAgent,
  createGenerator,
  runCli,
  startHub,
  startMaintenance,
  uniqueName,
  type CliResult,
  type TestHub,
} from './support.ts';

const RECIPE = path.join(repoRoot, 'examples', 'ci');

interface FakeAgent {
  id: string;
  name: string;
  client: TestClient;
}

/** The shell lines a CI job runs that call the recipe's script, in order. */
interface Job {
  env: Record<string, string>;
  lines: string[];
}

const recipeLines = (lines: (string | undefined)[]) => lines.filter((l): l is string => !!l && l.includes('brokkr-ci.sh'));

/** GitHub Actions: the `run:` of each step of a job, and the workflow's literal `env:` (its ${{ }} values are the CI's). */
async function githubJob(name: 'diff' | 'apply'): Promise<Job> {
  const workflow = parse(await fs.readFile(path.join(RECIPE, 'github-actions.yml'), 'utf8'));
  const env = Object.fromEntries(Object.entries(workflow.env as Record<string, string>).filter(([, v]) => !v.includes('${{')));
  const job = workflow.jobs[name] as { steps: { run?: string }[] };
  return { env, lines: recipeLines(job.steps.flatMap((s) => (s.run ?? '').split('\n'))) };
}

/** GitLab CI: the template's before_script, then the job's script. */
async function gitlabJob(name: 'brokkr-diff' | 'brokkr-apply'): Promise<Job> {
  const pipeline = parse(await fs.readFile(path.join(RECIPE, 'gitlab-ci.yml'), 'utf8'));
  const job = pipeline[name] as { extends: string; script: string[] };
  const base = pipeline[job.extends] as { before_script: string[] };
  return { env: pipeline.variables, lines: recipeLines([...base.before_script, ...job.script]) };
}

/**
 * The CI recipe (examples/ci/) run for real: a scratch repository holding the recipe's script and
 * a stack directory, and each job's own command lines — read from the workflow files, so what is
 * tested is what a platform engineer copies — run by bash against a started hub (and maintenance,
 * which moves rollouts on), with `brokkr` on PATH as the install step would leave it. Agents are
 * driven over REST, as in the other CLI tests.
 */
describe('examples/ci: the CI recipe against a running hub', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let maintenance: RunningService;
  let binDir: string;

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    maintenance = await startMaintenance(infra);
    binDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-bin-'));
    await fs.writeFile(path.join(binDir, 'brokkr'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  });
  after(async () => {
    await maintenance?.stop();
    await hub?.stop();
  });

  /** Runs the job's lines one by one as the CI would (bash -e), in the scratch repository; stops at the first failure. */
  async function runJob(job: Job, repo: string, pak: string): Promise<CliResult> {
    const env = {
      ...job.env,
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
      HOME: repo,
      BROKKR_URL: hub.url,
      BROKKR_PAK: pak,
    };
    let all: CliResult = { code: 0, stdout: '', stderr: '' };
    for (const line of job.lines) {
      const child = spawn('bash', ['-euo', 'pipefail', '-c', line], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (c: Buffer) => (all.stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (all.stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      all = { ...all, code };
      if (code !== 0) break;
    }
    return all;
  }

  /** Reports the apply (and health) of `version` once the hub serves it to the agent. */
  async function agentApplies(agent: FakeAgent, version: string, status: 'SUCCESS' | 'FAILURE'): Promise<void> {
    const object = await eventually(
      async () => {
        const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
        return (res.body as { id: string; yaml_content: string }[]).find((o) => o.yaml_content.includes(`"${version}"`));
      },
      { timeoutMs: 60_000, what: `version ${version} served to ${agent.name}` },
    );
    const event = { agent_id: agent.id, deployment_object_id: object.id, event_type: 'DEPLOY', status, message: status };
    expect((await agent.client.post(`/agents/${agent.id}/events`, event)).status).to.equal(201);
    const health = status === 'SUCCESS' ? 'healthy' : 'failing';
    const report = { deployment_objects: [{ id: object.id, status: health, checked_at: new Date().toISOString() }] };
    expect((await agent.client.patch(`/agents/${agent.id}/health-status`, report)).status).to.equal(200);
  }

  /** The dry run of a pending preview, reported as our agent would: the ConfigMap's value changes. */
  async function agentPreviews(agent: FakeAgent): Promise<void> {
    const preview = await eventually(
      async () => ((await agent.client.get(`/agents/${agent.id}/previews/pending`)).body as { id: string }[])[0],
      {
        what: `a preview for ${agent.name}`,
      },
    );
    const object = { api_version: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'app', action: 'changed' };
    const diff = [{ path: 'data.value', before: '"1"', after: '"2"' }];
    expect((await agent.client.post(`/previews/${preview.id}/results`, { objects: [{ ...object, diff }] })).status).to.equal(201);
  }

  /**
   * The one-time setup the recipe's README describes, by hand with the CLI: a scratch repository
   * with the script and deploy/web, the stack's first object and its two-wave rollout policy.
   */
  async function setUp(stackDir: string) {
    const generator = await createGenerator(hub);
    const canary = await createActiveAgent(hub, generator.id);
    expect((await hub.admin.post(`/agents/${canary.id}/labels`, { agent_id: canary.id, label: 'canary' })).status).to.equal(201);
    const other = await createActiveAgent(hub, generator.id);
    const repo = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-ci-repo-'));
    await fs.mkdir(path.join(repo, 'examples', 'ci'), { recursive: true });
    await fs.copyFile(path.join(RECIPE, 'brokkr-ci.sh'), path.join(repo, 'examples', 'ci', 'brokkr-ci.sh'));
    await fs.chmod(path.join(repo, 'examples', 'ci', 'brokkr-ci.sh'), 0o755);
    const dir = path.join(repo, stackDir);
    await fs.mkdir(dir, { recursive: true });
    // Stack names are unique across the hub: each run names its own (as a repository may, in .brokkr.yaml).
    const stack = uniqueName('web');
    await fs.writeFile(path.join(dir, '.brokkr.yaml'), `stack: ${stack}\ntargets: [${canary.name}, ${other.name}]\n`);
    await fs.writeFile(path.join(dir, 'app.yaml'), configMap('app', '1'));
    await fs.copyFile(path.join(RECIPE, 'policy.yaml'), path.join(repo, 'policy.yaml'));
    const env = hub.env(generator.pak);
    const first = await runCli(['apply', '-f', dir], { env });
    expect(first.code, first.stderr).to.equal(0);
    const policy = await runCli(['rollout', 'policy', 'set', stack, '-f', path.join(repo, 'policy.yaml')], { env });
    expect(policy.code, policy.stderr).to.equal(0);
    return { generator, canary, other, repo, dir };
  }

  for (const flavour of ['GitHub Actions', 'GitLab CI'] as const) {
    it(`${flavour}: diff on a change request posts a summary; apply --wait on main succeeds, and fails when the canary rolls back`, async () => {
      const [diffJob, applyJob] =
        flavour === 'GitHub Actions'
          ? [await githubJob('diff'), await githubJob('apply')]
          : [await gitlabJob('brokkr-diff'), await gitlabJob('brokkr-apply')];
      expect(diffJob.lines[0], 'the job installs the CLI first').to.include('brokkr-ci.sh install');
      expect(diffJob.env.STACK_DIR).to.equal(applyJob.env.STACK_DIR);
      const { generator, canary, other, repo, dir } = await setUp(diffJob.env.STACK_DIR!);

      // A change request: the new version is previewed on both clusters; changes do not fail the job.
      await fs.writeFile(path.join(dir, 'app.yaml'), configMap('app', '2'));
      const diffing = runJob(diffJob, repo, generator.pak);
      await Promise.all([agentPreviews(canary), agentPreviews(other)]);
      const diffed = await diffing;
      expect(diffed.code, diffed.stderr + diffed.stdout).to.equal(0);
      const summary = await fs.readFile(path.join(repo, 'brokkr-diff.md'), 'utf8');
      expect(summary).to.include('changes on some clusters (no errors)').and.include('data.value: "1" → "2"');

      // Merged: apply --wait follows the two waves to the end.
      const applying = runJob(applyJob, repo, generator.pak);
      await agentApplies(canary, '2', 'SUCCESS');
      await agentApplies(other, '2', 'SUCCESS');
      const applied = await applying;
      expect(applied.code, applied.stderr + applied.stdout).to.equal(0);
      expect(applied.stdout).to.include('wave 1/2 canary').and.include('succeeded: every wave applied and healthy');

      // A broken version: the canary fails, the hub rolls everyone back, the job fails.
      await fs.writeFile(path.join(dir, 'app.yaml'), configMap('app', '3-broken'));
      const breaking = runJob(applyJob, repo, generator.pak);
      await agentApplies(canary, '3-broken', 'FAILURE');
      const broken = await breaking;
      expect(broken.code, broken.stderr + broken.stdout).to.equal(1);
      expect(broken.stdout).to.include('ROLLED BACK');
    });
  }
});

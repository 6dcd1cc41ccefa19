import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { eventually, useTestInfra, type RunningService, type TestClient } from '@brokkr/testkit';
import {
  buildCli,
  configMap,
  createActiveAgent,
  createGenerator,
  manifestDir,
  runCli,
  startHub,
  startMaintenance,
  uniqueName,
  type TestHub,
} from './support.ts';

interface FakeAgent {
  id: string;
  name: string;
  client: TestClient;
}

const POLICY_YAML = `# canary first, then everyone
waves:
  - name: canary
    selector: { labels: [canary] }
    soak_seconds: 0
  - name: everyone
    percent: 100
    soak_seconds: 0
auto_rollback: true
`;

/**
 * The agent side of a wave, over REST as a real agent does: once the hub serves this agent the
 * object (its wave is released), report the apply and a health record. What `apply --wait`
 * follows is the hub's rollout, which maintenance moves on from exactly these reports.
 */
async function reportWhenServed(agent: FakeAgent, objectId: string, status: 'SUCCESS' | 'FAILURE'): Promise<void> {
  await eventually(
    async () => {
      const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
      return (res.body as { id: string }[]).some((o) => o.id === objectId) || undefined;
    },
    { timeoutMs: 60_000, what: `object ${objectId} served to ${agent.name}` },
  );
  const event = { agent_id: agent.id, deployment_object_id: objectId, event_type: 'DEPLOY', status, message: status };
  expect((await agent.client.post(`/agents/${agent.id}/events`, event)).status).to.equal(201);
  const health = status === 'SUCCESS' ? 'healthy' : 'failing';
  const report = { deployment_objects: [{ id: objectId, status: health, checked_at: new Date().toISOString() }] };
  expect((await agent.client.patch(`/agents/${agent.id}/health-status`, report)).status).to.equal(200);
}

describe('brokkr rollout, apply --wait with waves, get rollouts|previews|templates, stacks expire', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let maintenance: RunningService;
  let generator: { id: string; name: string; pak: string };
  let policyFile: string;

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    maintenance = await startMaintenance(infra);
    generator = await createGenerator(hub);
    policyFile = path.join(await manifestDir(uniqueName('policy'), {}), 'policy.yaml');
    await fs.writeFile(policyFile, POLICY_YAML);
  });

  after(async () => {
    await maintenance?.stop();
    await hub?.stop();
  });

  const cli = (args: string[]) => runCli(args, { env: hub.env(generator.pak) });

  /** A canary agent and one more, a stack applied once (the baseline) and targeted at both, with the two-wave policy. */
  async function stackWithPolicy(): Promise<{ name: string; dir: string; canary: FakeAgent; other: FakeAgent }> {
    const canary = await createActiveAgent(hub, generator.id);
    expect((await hub.admin.post(`/agents/${canary.id}/labels`, { agent_id: canary.id, label: 'canary' })).status).to.equal(201);
    const other = await createActiveAgent(hub, generator.id);
    const name = uniqueName('shop');
    const dir = await manifestDir(name, { 'app.yaml': configMap('app', '1') });
    const first = await cli(['apply', '-f', dir, '--target', canary.name, '--target', other.name]);
    expect(first.code, first.stderr).to.equal(0);
    const set = await cli(['rollout', 'policy', 'set', name, '-f', policyFile]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.match(/canary\s+labels canary/);
    return { name, dir, canary, other };
  }

  /** Writes version `v` and starts `apply --wait` (generator PAK) without waiting for it. */
  async function applyWaiting(stack: { dir: string }, v: string) {
    await fs.writeFile(path.join(stack.dir, 'app.yaml'), configMap('app', v));
    return cli(['apply', '-f', stack.dir, '--wait', '--interval', '200ms', '--timeout', '90s']);
  }

  /** The id of the stack's newest deployment object once it has `count`. */
  async function newestObject(name: string, count: number): Promise<string> {
    return eventually(
      async () => {
        const stack = (await hub.admin.get('/stacks')).body.find((s: { name: string }) => s.name === name);
        if (!stack) return undefined;
        const objects = (await hub.admin.get(`/stacks/${stack.id}/deployment-objects`)).body as { id: string; sequence_id: number }[];
        return objects.length >= count ? objects.sort((a, b) => b.sequence_id - a.sequence_id)[0]!.id : undefined;
      },
      { what: `object ${count} of ${name}` },
    );
  }

  it('policy set / get / delete from a YAML file; the hub refuses an invalid one with its reason', async () => {
    const { name, dir } = await stackWithPolicy();
    // The stack's first object went to every agent at once: no rollout, so a generator cannot follow it.
    const unfollowable = await cli(['apply', '-f', dir, '--wait']);
    expect(unfollowable.code).to.equal(1);
    expect(unfollowable.stderr).to.include("has no rollout to follow (the stack's first object");
    const got = await cli(['rollout', 'policy', 'get', name, '-o', 'json']);
    expect(got.code, got.stderr).to.equal(0);
    const stored = JSON.parse(got.stdout);
    expect(stored.policy.waves.map((w: { name: string }) => w.name)).to.deep.equal(['canary', 'everyone']);
    expect(stored.policy.waves[0].progress_deadline_seconds).to.equal(600);

    const bad = path.join(path.dirname(policyFile), 'bad.yaml');
    await fs.writeFile(bad, 'waves: [{name: a, percent: 50}, {name: a, percent: 100}]\n');
    const refused = await cli(['rollout', 'policy', 'set', name, '-f', bad]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/^invalid_request_body: .*wave names must be unique/m);

    expect((await cli(['rollout', 'policy', 'delete', name])).code).to.equal(0);
    const gone = await cli(['rollout', 'policy', 'get', name]);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.include('rollout_policy_not_found');
  });

  it('apply --wait follows a rollout wave by wave and exits 0 when it succeeded (a generator PAK is enough)', async () => {
    const stack = await stackWithPolicy();
    const waiting = applyWaiting(stack, '2');
    const objectId = await newestObject(stack.name, 2);
    await reportWhenServed(stack.canary, objectId, 'SUCCESS');
    await reportWhenServed(stack.other, objectId, 'SUCCESS');
    const res = await waiting;
    expect(res.code, res.stderr + res.stdout).to.equal(0);
    expect(res.stdout).to.match(/wave 1\/2 canary \(released\): 1\/1 applied, 1 healthy, 0 failed/);
    expect(res.stdout).to.match(/wave 2\/2 everyone \(released\): 1\/1 applied/);
    expect(res.stdout).to.include('succeeded: every wave applied and healthy');
    // The canary was released before the second wave: its line came first.
    expect(res.stdout.indexOf('wave 1/2 canary (released)')).to.be.lessThan(res.stdout.indexOf('wave 2/2 everyone (released)'));

    const status = await cli(['rollout', 'status', stack.name, '-o', 'yaml']);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.include('status: succeeded');
    expect(status.stdout).to.include(`deployment_object_id: ${objectId}`);
  });

  it('apply --wait exits 1 when the canary fails and the rollout is rolled back; get rollouts filters by status', async () => {
    const stack = await stackWithPolicy();
    const waiting = applyWaiting(stack, 'broken');
    const objectId = await newestObject(stack.name, 2);
    await reportWhenServed(stack.canary, objectId, 'FAILURE');
    const res = await waiting;
    expect(res.code, res.stderr + res.stdout).to.equal(1);
    expect(res.stdout).to.match(/wave 1\/2 canary \(released\): 0\/1 applied, 0 healthy, 1 failed/);
    expect(res.stdout).to.include('ROLLED BACK');
    expect(res.stdout).to.match(/Status:\s+rolled_back/);

    const listed = await cli(['get', 'rollouts', '--status', 'rolled_back', '-o', 'json']);
    expect(listed.code, listed.stderr).to.equal(0);
    const rollouts = JSON.parse(listed.stdout) as { stack_name: string; status: string; deployment_object_id: string }[];
    expect(rollouts.every((r) => r.status === 'rolled_back')).to.equal(true);
    expect(rollouts.map((r) => r.deployment_object_id)).to.include(objectId);
    const table = await cli(['get', 'rollouts', '--stack', stack.name]);
    expect(table.stdout).to.match(new RegExp(`${stack.name}\\s+rolled_back\\s+1/2\\s+canary 0/1 \\(1 failed\\)`));
    // Another generator's PAK sees none of this generator's rollouts.
    const other = await createGenerator(hub);
    const foreign = await runCli(['get', 'rollouts', '-o', 'json'], { env: hub.env(other.pak) });
    expect(JSON.parse(foreign.stdout)).to.deep.equal([]);
  });

  it('rollout pause / resume / abort act on the open rollout; promote afterwards says there is none', async () => {
    const stack = await stackWithPolicy();
    await fs.writeFile(path.join(stack.dir, 'app.yaml'), configMap('app', '3'));
    expect((await cli(['apply', '-f', stack.dir])).code).to.equal(0);
    await eventually(
      async () => ((await cli(['rollout', 'status', stack.name])).stdout.match(/Status:\s+progressing/) ? true : undefined),
      {
        what: 'the rollout progressing',
      },
    );
    const paused = await cli(['rollout', 'pause', stack.name]);
    expect(paused.code, paused.stderr).to.equal(0);
    expect(paused.stdout).to.include('progressing → paused');
    const resumed = await cli(['rollout', 'resume', stack.name, '-o', 'json']);
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(JSON.parse(resumed.stdout).status).to.equal('progressing');
    expect(resumed.stderr).to.include('paused → progressing');
    const aborted = await cli(['rollout', 'abort', stack.name]);
    expect(aborted.stdout).to.include('→ aborted');
    const promoted = await cli(['rollout', 'promote', stack.name]);
    expect(promoted.code).to.equal(1);
    expect(promoted.stderr).to.match(/has no rollout to act on: its newest \(\w+\) is aborted/);
  });

  it('stacks expire --in 2h sets the expiry, --never clears it; a bad duration changes nothing', async () => {
    const name = uniqueName('preview-env');
    const dir = await manifestDir(name, { 'app.yaml': configMap('app', '1') });
    expect((await cli(['apply', '-f', dir])).code).to.equal(0);
    const before = Date.now();
    const set = await cli(['stacks', 'expire', name, '--in', '2h', '-o', 'json']);
    expect(set.code, set.stderr).to.equal(0);
    const expiresAt = Date.parse(JSON.parse(set.stdout).expires_at);
    expect(expiresAt).to.be.within(before + 7_190_000, Date.now() + 7_210_000);
    const bad = await cli(['stacks', 'expire', name, '--in', 'soon']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('invalid duration "soon"');
    const cleared = await cli(['stacks', 'expire', name, '--never']);
    expect(cleared.code, cleared.stderr).to.equal(0);
    expect(cleared.stdout).to.include('no longer expires');
  });

  it('get templates lists template versions; get previews --stack lists a stack’s previews, one by id whole', async () => {
    const tpl = await hub.admin.as(generator.pak).post('/templates', {
      name: uniqueName('tpl'),
      description: 'a config map',
      template_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ name }}\n',
      parameters_schema: '{"type":"object","properties":{"name":{"type":"string"}}}',
    });
    expect(tpl.status, tpl.text).to.equal(201);
    const templates = await cli(['get', 'templates']);
    expect(templates.code, templates.stderr).to.equal(0);
    expect(templates.stdout).to.match(new RegExp(`${tpl.body.name}\\s+1\\s+${generator.id.slice(0, 8)}`));

    const name = uniqueName('previewed');
    const dir = await manifestDir(name, { 'app.yaml': configMap('app', '1') });
    expect((await cli(['apply', '-f', dir])).code).to.equal(0);
    const stack = (await hub.admin.get('/stacks')).body.find((s: { name: string }) => s.name === name);
    const preview = await hub.admin.post(`/stacks/${stack.id}/previews`, { yaml_content: configMap('app', '2') });
    expect(preview.status, preview.text).to.equal(201);
    const list = await cli(['get', 'previews', '--stack', name]);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.match(new RegExp(`completed\\s+0\\s+0\\s+0\\s+0\\s+admin\\s+\\S+\\s+${preview.body.id}`));
    const one = await cli(['get', 'previews', preview.body.id, '-o', 'json']);
    expect(JSON.parse(one.stdout)).to.include({ id: preview.body.id, stack_id: stack.id });
    const missing = await cli(['get', 'previews']);
    expect(missing.stderr).to.include('add --stack');
  });
});

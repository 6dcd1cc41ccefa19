import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { eventually, useTestInfra, type TestClient } from '@brokkr/testkit';
import {
  buildCli,
  configMap,
  createActiveAgent,
  createGenerator,
  manifestDir,
  runCli,
  startHub,
  uniqueName,
  type TestHub,
} from './support.ts';

interface DeploymentObject {
  id: string;
  sequence_id: number;
  stack_id: string;
  yaml_content: string;
}

async function stackNamed(hub: TestHub, name: string): Promise<{ id: string; generator_id: string } | undefined> {
  return (await hub.admin.get('/stacks')).body.find((s: { name: string }) => s.name === name);
}

async function objectsOf(hub: TestHub, stackId: string): Promise<DeploymentObject[]> {
  return (await hub.admin.get(`/stacks/${stackId}/deployment-objects`)).body;
}

/**
 * The agent side of `--wait`, driven through the REST API as a real agent would: wait until the
 * hub serves the stack's object in this agent's target state, then report the outcome (and a
 * health record). No cluster is involved: what the CLI follows is only what agents report.
 */
async function fakeAgentReports(agent: { id: string; client: TestClient }, stackId: string, status: 'SUCCESS' | 'FAILURE'): Promise<void> {
  const object = await eventually(
    async () => {
      const res = await agent.client.get(`/agents/${agent.id}/target-state`);
      return (res.body as DeploymentObject[]).find((o) => o.stack_id === stackId);
    },
    { timeoutMs: 30_000, what: 'the object in the fake agent target state' },
  );
  const event = {
    agent_id: agent.id,
    deployment_object_id: object.id,
    event_type: 'APPLIED',
    status,
    message: status === 'SUCCESS' ? 'applied 1 object' : 'configmaps "x" is forbidden',
  };
  expect((await agent.client.post(`/agents/${agent.id}/events`, event)).status).to.equal(201);
  const health = {
    deployment_objects: [{ id: object.id, status: status === 'SUCCESS' ? 'healthy' : 'failing', checked_at: new Date().toISOString() }],
  };
  expect((await agent.client.patch(`/agents/${agent.id}/health-status`, health)).status).to.equal(200);
}

describe('brokkr apply (built CLI against a real hub)', () => {
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let generator: { id: string; name: string; pak: string };

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    generator = await createGenerator(hub);
  });

  after(async () => {
    await hub?.stop();
  });

  it('creates the stack (named after the directory) and one deployment object holding every file', async () => {
    const name = uniqueName('web');
    const dir = await manifestDir(name, { 'b.yaml': configMap('b', '2'), 'a.yml': `---\n${configMap('a', '1')}`, 'notes.txt': 'ignored' });
    const res = await runCli(['apply', '-f', dir], { env: hub.env(generator.pak) });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.include(`stack "${name}" created`);
    const stack = await stackNamed(hub, name);
    expect(stack?.generator_id).to.equal(generator.id);
    const objects = await objectsOf(hub, stack!.id);
    expect(objects).to.have.length(1);
    const yaml = objects[0]!.yaml_content;
    expect(yaml.indexOf('name: a')).to.be.greaterThan(-1).and.lessThan(yaml.indexOf('name: b'));
    expect(yaml).to.not.include('ignored');
  });

  it('creates nothing when the content is unchanged, and a new object when it changed', async () => {
    const name = uniqueName('api');
    const dir = await manifestDir(name, { 'cm.yaml': configMap('cm', 'one') });
    expect((await runCli(['apply', '-f', dir], { env: hub.env(generator.pak) })).code).to.equal(0);
    const stack = (await stackNamed(hub, name))!;

    const again = await runCli(['apply', '-f', dir], { env: hub.env(generator.pak) });
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.include('unchanged');
    expect(await objectsOf(hub, stack.id)).to.have.length(1);

    await fs.writeFile(path.join(dir, 'cm.yaml'), configMap('cm', 'two'));
    const changed = await runCli(['apply', '-f', dir, '-o', 'json'], { env: hub.env(generator.pak) });
    expect(changed.code, changed.stderr).to.equal(0);
    const summary = JSON.parse(changed.stdout);
    expect(summary.created).to.equal(true);
    const objects = await objectsOf(hub, stack.id);
    expect(objects).to.have.length(2);
    expect(objects[0]!.yaml_content).to.include('two');
    expect(summary.deployment_object.id).to.equal(objects[0]!.id);
    expect(objects[0]!.sequence_id).to.be.greaterThan(objects[1]!.sequence_id);
  });

  it('applies one file to the stack named by --stack, owned by --generator with an admin PAK', async () => {
    const dir = await manifestDir(uniqueName('files'), { 'single.yaml': configMap('single', 'x') });
    const name = uniqueName('chosen');
    const res = await runCli(['apply', '-f', path.join(dir, 'single.yaml'), '--stack', name, '--generator', generator.name], {
      env: hub.env(),
    });
    expect(res.code, res.stderr).to.equal(0);
    const stack = await stackNamed(hub, name);
    expect(stack?.generator_id).to.equal(generator.id);
    expect(await objectsOf(hub, stack!.id)).to.have.length(1);
  });

  it('adds labels from .brokkr.yaml and --label once; an agent with one of them receives the stack', async () => {
    const agent = await createActiveAgent(hub, generator.id);
    expect((await hub.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label: 'tier-web' })).status).to.equal(201);
    const name = uniqueName('labelled');
    const dir = await manifestDir(name, {
      'cm.yaml': configMap('l', '1'),
      '.brokkr.yaml': 'labels: [tier-web]\ndescription: from settings\n',
    });
    for (let i = 0; i < 2; i++) {
      const res = await runCli(['apply', '-f', dir, '--label', 'team-a'], { env: hub.env(generator.pak) });
      expect(res.code, res.stderr).to.equal(0);
    }
    const stack = (await stackNamed(hub, name))!;
    const labels = (await hub.admin.get(`/stacks/${stack.id}/labels`)).body.map((l: { label: string }) => l.label);
    expect(labels.sort()).to.deep.equal(['team-a', 'tier-web']);
    expect((await hub.admin.get(`/stacks/${stack.id}`)).body.description).to.equal('from settings');
    const received = (await agent.client.get(`/agents/${agent.id}/stacks`)).body.map((s: { id: string }) => s.id);
    expect(received).to.include(stack.id);
  });

  it('--wait exits 0 once every agent targeting the stack reported it applied (fake agent over REST)', async () => {
    const agent = await createActiveAgent(hub, generator.id);
    const name = uniqueName('rollout');
    const dir = await manifestDir(name, { 'cm.yaml': configMap('rollout', 'v1'), '.brokkr.yaml': `generator: ${generator.name}\n` });
    const running = runCli(['apply', '-f', dir, '--target', agent.name, '--wait', '--timeout', '60s', '--interval', '200ms'], {
      env: hub.env(),
    });
    const stack = await eventually(() => stackNamed(hub, name), { timeoutMs: 30_000, what: 'the stack' });
    await fakeAgentReports(agent, stack.id, 'SUCCESS');
    const res = await running;
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(res.stdout).to.include(`targeted at agent ${agent.name}`);
    expect(res.stdout).to.match(new RegExp(`${agent.name} \\(cluster ${agent.name}\\): applied`));
    expect(res.stdout).to.include('applied by every agent');
    expect(res.stdout).to.match(/STATE\s+HEALTH/);
  });

  it('--wait exits 1 when an agent reports a failure, and shows its message', async () => {
    const agent = await createActiveAgent(hub, generator.id);
    const name = uniqueName('broken');
    const dir = await manifestDir(name, { 'cm.yaml': configMap('broken', 'v1') });
    const args = ['apply', '-f', dir, '--generator', generator.name, '--target', agent.id, '--wait', '--interval', '200ms', '-o', 'json'];
    const running = runCli(args, { env: hub.env() });
    const stack = await eventually(() => stackNamed(hub, name), { timeoutMs: 30_000, what: 'the stack' });
    await fakeAgentReports(agent, stack.id, 'FAILURE');
    const res = await running;
    expect(res.code, res.stdout + res.stderr).to.equal(1);
    const summary = JSON.parse(res.stdout);
    expect(summary.rollout.outcome).to.equal('failed');
    expect(summary.rollout.agents[0]).to.include({ agent_id: agent.id, state: 'failed', message: 'configmaps "x" is forbidden' });
    expect(res.stderr).to.include('FAILED');
  });

  it('--wait exits 2 when the timeout passes before the agent reports', async () => {
    const agent = await createActiveAgent(hub, generator.id);
    const dir = await manifestDir(uniqueName('slow'), { 'cm.yaml': configMap('slow', 'v1') });
    const res = await runCli(
      ['apply', '-f', dir, '--generator', generator.id, '--target', agent.name, '--wait', '--timeout', '1s', '--interval', '200ms'],
      {
        env: hub.env(),
      },
    );
    expect(res.code, res.stdout + res.stderr).to.equal(2);
    expect(res.stdout).to.include('timed out after 1s');
    expect(res.stdout).to.match(/pending/);
  });

  it('--wait with a generator PAK is refused before anything changes', async () => {
    const name = uniqueName('nowait');
    const dir = await manifestDir(name, { 'cm.yaml': configMap('x', '1') });
    const res = await runCli(['apply', '-f', dir, '--wait'], { env: hub.env(generator.pak) });
    expect(res.code).to.equal(1);
    expect(res.stderr).to.include('--wait needs an admin PAK');
    expect(await stackNamed(hub, name)).to.equal(undefined);
  });

  it('--wait skips INACTIVE agents (they receive nothing) and fails clearly when no active agent is left (exit 1)', async () => {
    const inactive = await hub.admin.post('/agents', { name: uniqueName('idle'), cluster_name: 'idle', generator_ids: [generator.id] });
    expect(inactive.status).to.equal(201);
    const dir = await manifestDir(uniqueName('lonely'), { 'cm.yaml': configMap('x', '1') });
    const args = ['apply', '-f', dir, '--generator', generator.id, '--target', inactive.body.agent.id, '--wait'];
    const res = await runCli(args, { env: hub.env() });
    expect(res.code).to.equal(1);
    expect(res.stdout).to.include(`targets this stack but is INACTIVE: not waiting for it`);
    expect(res.stderr).to.include('no active agent receives stack');
  });

  describe('bad input: a clear error, exit 1, nothing created', () => {
    async function expectRefused(args: string[], message: string | RegExp, stackName?: string) {
      const before = (await hub.admin.get('/stacks')).body.length;
      const res = await runCli(args, { env: hub.env(generator.pak) });
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      if (typeof message === 'string') expect(res.stderr).to.include(message);
      else expect(res.stderr).to.match(message);
      expect((await hub.admin.get('/stacks')).body.length).to.equal(before);
      if (stackName) expect(await stackNamed(hub, stackName)).to.equal(undefined);
    }

    it('a path that does not exist', () => expectRefused(['apply', '-f', '/nonexistent/brokkr'], 'no such file or directory'));

    it('a directory without YAML files', async () => {
      const dir = await manifestDir(uniqueName('empty'), { 'README.md': '# nothing' });
      await expectRefused(['apply', '-f', dir], 'no *.yaml or *.yml files');
    });

    it('invalid YAML, naming the file', async () => {
      const dir = await manifestDir(uniqueName('bad'), { 'ok.yaml': configMap('ok', '1'), 'broken.yaml': 'kind: [unclosed\n' });
      await expectRefused(['apply', '-f', dir], /broken\.yaml: invalid YAML/);
    });

    it('a document that is not a Kubernetes object', async () => {
      const dir = await manifestDir(uniqueName('list'), { 'list.yaml': '- a\n- b\n' });
      await expectRefused(['apply', '-f', dir], 'must be a Kubernetes object');
    });

    it('an unknown key in .brokkr.yaml', async () => {
      const dir = await manifestDir(uniqueName('settings'), { 'cm.yaml': configMap('x', '1'), '.brokkr.yaml': 'target: [a]\n' });
      await expectRefused(['apply', '-f', dir], 'unknown key(s) target');
    });

    it('an unknown target agent', async () => {
      const name = uniqueName('notarget');
      const dir = await manifestDir(name, { 'cm.yaml': configMap('x', '1') });
      await expectRefused(['apply', '-f', dir, '--target', 'no-such-agent'], 'agent "no-such-agent" not found', name);
    });

    it('an invalid stack label', async () => {
      const name = uniqueName('badlabel');
      const dir = await manifestDir(name, { 'cm.yaml': configMap('x', '1') });
      await expectRefused(['apply', '-f', dir, '--label', 'has space'], 'invalid label "has space"', name);
    });

    it('an unknown owner generator (admin PAK)', async () => {
      const name = uniqueName('nogen');
      const dir = await manifestDir(name, { 'cm.yaml': configMap('x', '1') });
      const res = await runCli(['apply', '-f', dir, '--generator', 'no-such-generator'], { env: hub.env() });
      expect(res.code).to.equal(1);
      expect(res.stderr).to.include('generator "no-such-generator" not found');
      expect(await stackNamed(hub, name)).to.equal(undefined);
    });

    it('a hub error is printed as <code>: <message>', async () => {
      const dir = await manifestDir(uniqueName('denied'), { 'cm.yaml': configMap('x', '1') });
      const res = await runCli(['apply', '-f', dir], { env: hub.env('brokkr_BRxxxxxx_notAValidPak') });
      expect(res.code).to.equal(1);
      expect(res.stderr).to.match(/^unauthorized: /m);
    });

    it('an invalid --timeout', () => expectRefused(['apply', '-f', '.', '--wait', '--timeout', 'soon'], 'invalid duration "soon"'));
  });
});

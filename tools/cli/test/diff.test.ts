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

type Action = 'created' | 'changed' | 'unchanged' | 'pruned';

/**
 * The agent side of a preview, driven through the REST API as our agent does: wait until the hub
 * hands this agent the preview, then report one result. No cluster is involved here (the agents'
 * real dry run is services/agent/test/previews.e2e.test.ts): what the CLI shows is what agents report.
 */
async function fakeAgentReports(
  agent: { id: string; client: TestClient },
  result: { action: Action | null; error?: string },
): Promise<void> {
  const preview = await eventually(
    async () => {
      const res = await agent.client.get(`/agents/${agent.id}/previews/pending`);
      return (res.body as { id: string }[])[0];
    },
    { what: 'a pending preview' },
  );
  const object = {
    api_version: 'v1',
    kind: 'ConfigMap',
    namespace: 'default',
    name: 'app',
    action: result.action,
    diff: result.action === 'changed' ? [{ path: 'data.value', before: '"1"', after: '"2"' }] : [],
    error: result.error ?? null,
  };
  const res = await agent.client.post(`/previews/${preview.id}/results`, { objects: [object] });
  expect(res.status, res.text).to.equal(201);
}

describe('brokkr diff', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let generator: { id: string; pak: string };

  before(async () => {
    await buildCli();
    hub = await startHub(infra);
    generator = await createGenerator(hub);
  });
  after(() => hub?.stop());

  /** A stack applied with v1 and targeted at `count` fake agents; returns the directory to diff and the agents. */
  async function appliedStack(count: number) {
    const agents = await Promise.all(Array.from({ length: count }, () => createActiveAgent(hub, generator.id)));
    const name = uniqueName('diffstack');
    const dir = await manifestDir(name, { 'app.yaml': configMap('app', '1') });
    const targets = agents.flatMap((a) => ['--target', a.name]);
    const applied = await runCli(['apply', '-f', dir, ...targets], { env: hub.env(generator.pak) });
    expect(applied.code, applied.stderr).to.equal(0);
    return { dir, agents, name };
  }

  it('prints per agent the objects that would change with their fields, and exits 3 on changes', async () => {
    const { dir, agents } = await appliedStack(2);
    const cli = runCli(['diff', '-f', dir, '--interval', '200ms'], { env: hub.env(generator.pak) });
    await Promise.all([fakeAgentReports(agents[0]!, { action: 'changed' }), fakeAgentReports(agents[1]!, { action: 'unchanged' })]);
    const out = await cli;
    expect(out.code, out.stdout + out.stderr).to.equal(3);
    expect(out.stdout).to.match(/asking 2 agent\(s\)/);
    expect(out.stdout).to.include(`${agents[0]!.name} (cluster ${agents[0]!.name}): changes (1 changed)`);
    expect(out.stdout).to.include('~ ConfigMap default/app  changed');
    expect(out.stdout).to.include('data.value: "1" → "2"');
    expect(out.stdout).to.include(`${agents[1]!.name} (cluster ${agents[1]!.name}): clean (1 unchanged)`);
    expect(out.stdout).to.include('2 agent(s): 1 clean, 1 with changes, 0 with errors');
  });

  it('exits 0 when every agent is clean, and prints the hub document with -o json', async () => {
    const { dir, agents } = await appliedStack(1);
    const cli = runCli(['diff', '-f', dir, '--interval', '200ms', '-o', 'json'], { env: hub.env(generator.pak) });
    await fakeAgentReports(agents[0]!, { action: 'unchanged' });
    const out = await cli;
    expect(out.code, out.stderr).to.equal(0);
    const doc = JSON.parse(out.stdout) as { status: string; counts: { clean: number } };
    expect(doc).to.deep.include({ status: 'completed' });
    expect(doc.counts.clean).to.equal(1);
  });

  it('exits 1 when an agent reports an error, and shows it', async () => {
    const { dir, agents } = await appliedStack(1);
    const cli = runCli(['diff', '-f', dir, '--interval', '200ms'], { env: hub.env(generator.pak) });
    await fakeAgentReports(agents[0]!, { action: null, error: 'ConfigMap "app" is invalid: data: Invalid value' });
    const out = await cli;
    expect(out.code).to.equal(1);
    expect(out.stdout).to.include('! ConfigMap default/app: ConfigMap "app" is invalid');
  });

  it('exits 2 when an agent does not report in time; refuses an unknown stack and publishes nothing', async () => {
    const { dir, name } = await appliedStack(1);
    const out = await runCli(['diff', '-f', dir, '--timeout', '1s', '--interval', '200ms'], { env: hub.env(generator.pak) });
    expect(out.code).to.equal(2);
    expect(out.stdout).to.match(/no answer yet/);
    const stacks = (await hub.admin.get('/stacks')).body as { id: string; name: string }[];
    const stack = stacks.find((s) => s.name === name)!;
    expect(((await hub.admin.get(`/stacks/${stack.id}/deployment-objects`)).body as unknown[]).length).to.equal(1);

    const missing = await runCli(['diff', '-f', dir, '--stack', 'no-such-stack'], { env: hub.env(generator.pak) });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/stack "no-such-stack" not found/);
  });
});

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generatePak } from '@brokkr/pak';
import type { RenderInputs } from '@brokkr/contracts';
import { locateRenderer } from '@brokkr/render';
import { buildRoot, checkIntent, publicKeyFromPem, renderInputsContent, sha256Hex, type TrustView } from '@brokkr/trust';
import {
  fixtureChartDir,
  fixtureKustomizeDir,
  spawnRenderer,
  startChartRepository,
  useTestInfra,
  type ChartRepository,
  type TestRenderer,
} from '@brokkr/testkit';
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

/** The YAML the agent is served, every object's. */
async function servedData(agent: Awaited<ReturnType<typeof createActiveAgent>>): Promise<string> {
  const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
  return (res.body as { yaml_content: string }[]).map((o) => o.yaml_content).join('\n---\n');
}

describe('brokkr apply --chart / -k and brokkr overrides (built CLI against a real hub)', function () {
  // The first run on a machine builds brokkr-render (minutes; cached afterwards).
  this.timeout(20 * 60_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let repo: ChartRepository;
  let renderer: TestRenderer;

  before(async () => {
    const [binary] = await Promise.all([locateRenderer(), buildCli()]);
    repo = await startChartRepository([fixtureChartDir('demo')]);
    renderer = await spawnRenderer({ databaseUrl: infra.db.url, binary });
    hub = await startHub(infra, generatePak(), { BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: 'true' });
  });

  after(async () => {
    await hub?.stop();
    await renderer?.stop();
    await repo?.close();
  });

  async function tenantWithAgent() {
    const generator = await createGenerator(hub);
    const agent = await createActiveAgent(hub, generator.id);
    return { generator, agent };
  }

  it('applies a chart with a values file, rendered for the targeted agent', async () => {
    const { generator, agent } = await tenantWithAgent();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-values-'));
    await fs.writeFile(path.join(dir, 'values.yaml'), 'greeting: hello from a values file\n');
    const stack = uniqueName('chart');
    const res = await runCli(
      [
        'apply',
        '--chart',
        'demo',
        '--repo',
        repo.url,
        '--chart-version',
        '0.1.0',
        '--values',
        path.join(dir, 'values.yaml'),
        '--stack',
        stack,
        '--target',
        agent.name,
      ],
      { env: hub.env(generator.pak) },
    );
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.contain(`from chart demo 0.1.0 from ${repo.url}, rendered for each agent`);
    expect(await servedData(agent)).to.contain('greeting: "hello from a values file"');
  });

  it('apply --chart --sign signs the render inputs: the hub relays them with that signature, and an agent’s checks take it', async () => {
    const { generator, agent } = await tenantWithAgent();
    const keys = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-keys-'));
    expect((await runCli(['trust', 'keygen', 'ci', '--dir', keys])).code).to.equal(0);
    const key = path.join(keys, 'ci.key');
    const chart = ['apply', '--chart', 'demo', '--repo', repo.url, '--chart-version', '0.1.0', '--target', agent.name];
    const stack = uniqueName('signed-chart');
    const env = hub.env(generator.pak);
    const noRenderer = await runCli([...chart, '--stack', stack, '--sign', key], { env });
    expect(noRenderer.code).to.not.equal(0);
    expect(noRenderer.stderr).to.contain('--sign with --chart or -k needs --renderer');

    const renderer = 'brokkr-render test';
    const res = await runCli([...chart, '--stack', stack, '--sign', key, '--renderer', renderer, '-o', 'json'], { env });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stderr).to.match(/signature stored \(render inputs sha256 [0-9a-f]{12}…, rendered by each agent\)/);
    const object = JSON.parse(res.stdout).deployment_object as { id: string; stack_id: string };
    const relayed = await agent.client.get(`/agents/${agent.id}/render-inputs/${object.id}`);
    expect(relayed.status, JSON.stringify(relayed.body)).to.equal(200);
    const body = relayed.body as RenderInputs;
    expect(body.kind).to.not.equal('template');
    const content = renderInputsContent({
      kind: body.kind as 'helm' | 'kustomize',
      archive: Buffer.from(body.archive, 'base64'),
      values: body.values ?? undefined,
      options: body.options!,
      renderer,
    });
    const pub = publicKeyFromPem(await fs.readFile(path.join(keys, 'ci.pub'), 'utf8'));
    const view: TrustView = {
      root: buildRoot({ version: 1, rootKeys: [pub], threshold: 1, generators: [{ name: 'ci', keys: [pub], stacks: ['*'] }] }),
      revocations: undefined,
      stale: undefined,
      keyless: undefined,
      identity: { name: agent.name, cluster: 'c', labels: [] },
      now: new Date(),
    };
    const verdict = checkIntent(
      view,
      { stackId: object.stack_id, content, deletion: false, signed: body.signature, rendered: 'helm' },
      undefined,
    );
    expect(verdict.ok, JSON.stringify(verdict)).to.equal(true);
    expect(verdict.ok && verdict.statement.predicate).to.deep.include({ kind: 'helm', renderer });
    await fs.rm(keys, { recursive: true, force: true });
  });

  it('apply --chart --sign --layers: the stack’s layers become the file’s and are signed with the inputs; without --layers a stack with layers is refused', async () => {
    const { generator, agent } = await tenantWithAgent();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-layers-'));
    expect((await runCli(['trust', 'keygen', 'ci', '--dir', dir])).code).to.equal(0);
    const key = path.join(dir, 'ci.key');
    const stack = uniqueName('signed-layers');
    const env = hub.env(generator.pak);
    const signed = ['apply', '--chart', 'demo', '--repo', repo.url, '--chart-version', '0.1.0', '--target', agent.name, '--stack', stack];
    const sign = ['--sign', key, '--renderer', 'brokkr-render test'];
    expect((await runCli(signed, { env })).code).to.equal(0);
    const leftover = path.join(dir, 'leftover.yaml');
    await fs.writeFile(leftover, 'name: leftover\nvalues: {greeting: from a layer the generator did not sign}\n');
    expect((await runCli(['overrides', 'apply', stack, '-f', leftover], { env })).code).to.equal(0);

    const refused = await runCli([...signed, ...sign], { env });
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain(`stack "${stack}" has 1 override layer(s) (leftover): pass them with --layers <file>`);

    const file = path.join(dir, 'layers.yaml');
    await fs.writeFile(file, 'name: edge\nselector: {labels: [edge]}\nvalues: {greeting: hello edge}\n---\nname: base\npriority: -1\n');
    const res = await runCli([...signed, ...sign, '--layers', file, '-o', 'json'], { env });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stderr).to.contain(`stack "${stack}": layer "leftover" deleted (not in the file)`);
    const object = JSON.parse(res.stdout).deployment_object as { id: string };
    const body = (await agent.client.get<RenderInputs>(`/agents/${agent.id}/render-inputs/${object.id}`)).body;
    expect(body.layers).to.deep.equal([
      { name: 'base', priority: -1, selector: {}, values: null, patches: null },
      { name: 'edge', priority: 0, selector: { labels: ['edge'] }, values: { greeting: 'hello edge' }, patches: null },
    ]);
    const statement = JSON.parse(
      Buffer.from((body.signature as { dsseEnvelope: { payload: string } }).dsseEnvelope.payload, 'base64').toString(),
    );
    const names = (statement.predicate.inputs as { name: string }[]).map((i) => i.name);
    expect(names).to.deep.equal(['source', 'values', 'options', 'layers']);
    const content = renderInputsContent({
      kind: 'helm',
      archive: Buffer.from(body.archive, 'base64'),
      values: body.values ?? undefined,
      options: body.options!,
      renderer: 'brokkr-render test',
      layers: body.layers,
    });
    expect(statement.subject[0].digest.sha256).to.equal(sha256Hex(content));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('applies a kustomize overlay with the base it reaches, packed by the CLI', async () => {
    const { generator, agent } = await tenantWithAgent();
    const copy = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-kustomize-')), 'demo');
    await fs.cp(fixtureKustomizeDir('demo'), copy, { recursive: true });
    const res = await runCli(['apply', '-k', path.join(copy, 'overlays', 'prod'), '--target', agent.name], { env: hub.env(generator.pak) });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.contain('kustomize overlay overlays/prod');
    expect(res.stdout).to.contain('stack "demo-prod" created');
    expect(await servedData(agent)).to.contain('name: prod-demo');
  });

  it('creates, lists, explains and deletes override layers', async () => {
    const { generator, agent } = await tenantWithAgent();
    const stack = uniqueName('layered');
    const dir = await manifestDir(stack, { 'cm.yaml': configMap('cfg', 'one') });
    const env = hub.env(generator.pak);
    expect((await runCli(['apply', '-f', dir, '--target', agent.name], { env })).code).to.equal(0);
    const layers = path.join(dir, '..', 'layers.yaml');
    await fs.writeFile(
      layers,
      'name: cluster\npriority: 5\npatches:\n  - target: {kind: ConfigMap, name: cfg}\n    merge_patch: {data: {cluster: "{{ agent.cluster_name }}"}}\n',
    );
    const applied = await runCli(['overrides', 'apply', stack, '-f', layers], { env });
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stdout).to.contain(`layer "cluster" created`);
    expect(await servedData(agent)).to.contain(`cluster: ${agent.name}`);
    const again = await runCli(['overrides', 'apply', stack, '-f', layers], { env });
    expect(again.stdout).to.contain(`layer "cluster" replaced`);

    const list = await runCli(['overrides', 'list', stack], { env });
    expect(list.stdout).to.match(/cluster\s+5\s+\(every agent\)/);
    const explained = await runCli(['overrides', 'explain', stack, agent.name], { env });
    expect(explained.code, explained.stderr).to.equal(0);
    expect(explained.stdout).to.match(/ConfigMap 'cfg'\s+\/data\/cluster\s+cluster\s+merge_patch/);

    expect((await runCli(['overrides', 'delete', stack, 'cluster'], { env })).code).to.equal(0);
    expect(await servedData(agent)).not.to.contain('cluster:');
  });
});

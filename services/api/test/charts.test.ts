import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { locateRenderer } from '@brokkr/render';
import { generateSigningKey, renderInputDigests, renderInputsContent, sha256Hex, signIntent, type RenderInputValues } from '@brokkr/trust';
import {
  fixtureChartDir,
  fixtureKustomizeDir,
  packChart,
  packDirectory,
  pushChart,
  spawnRenderer,
  startChartRepository,
  startOciRegistry,
  useTestInfra,
  type ChartRepository,
  type OciRegistry,
  type TestRenderer,
} from '@brokkr/testkit';
import { releaseName } from '../src/rendering/source-of.ts';
import {
  createAgent,
  createGenerator,
  createStack,
  startTestApi,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * Charts and overlays (docs/renders.md): fetched once and pinned at submit, rendered by the real
 * engines (the sandboxed brokkr-render, run by a renderer service beside the api) once per distinct
 * input, each agent served its own render, refused at submit when some targeted agent cannot be
 * rendered. A classic chart repository and an OCI registry are served locally. Black-box, through
 * HTTP (the render counts read the database).
 */
describe('api charts and overlays', function () {
  // The first run on a machine builds brokkr-render (minutes; cached afterwards).
  this.timeout(20 * 60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let renderer: TestRenderer;
  let repo: ChartRepository;
  let registry: OciRegistry;

  interface Agent {
    id: string;
    name: string;
    client: ApiClient;
  }
  interface Tenant {
    id: string;
    client: ApiClient;
    stack: string;
  }

  async function tenant(): Promise<Tenant> {
    const { generator, client } = await createGenerator(api.admin);
    const stack = await createStack(client, { generator_id: generator.id });
    return { id: generator.id, client, stack: stack.id };
  }

  async function agentOf(t: Tenant, annotations: Record<string, string> = {}, kubernetesVersion?: string): Promise<Agent> {
    const { agent, client } = await createAgent(api.admin);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    expect((await api.admin.post(`/generators/${t.id}/register`, { agent_id: agent.id })).status).to.equal(201);
    for (const [key, value] of Object.entries(annotations)) {
      expect((await api.admin.post(`/agents/${agent.id}/annotations`, { agent_id: agent.id, key, value })).status).to.equal(201);
    }
    if (kubernetesVersion) {
      const facts = { kubernetes_version: kubernetesVersion, api_versions: ['apps/v1', 'v1'] };
      expect((await client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, facts })).status).to.equal(204);
    }
    expect((await t.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: t.stack })).status).to.equal(201);
    return { id: agent.id, name: agent.name, client };
  }

  /** Each document the agent is served, by kind. */
  async function served(
    agent: Agent,
  ): Promise<Record<string, { metadata: { name: string }; data?: Record<string, string>; spec?: unknown }>> {
    const res = await agent.client.get<{ yaml_content: string }[]>(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    const docs = res.body.flatMap((o) => parseAllDocuments(o.yaml_content).map((d) => d.toJS() as { kind: string }));
    return Object.fromEntries(docs.filter(Boolean).map((d) => [d.kind, d])) as never;
  }

  const postSource = (t: Tenant, body: unknown) =>
    t.client.post<{ id: string; yaml_content: string; message?: string; details?: unknown }>(`/stacks/${t.stack}/deployment-objects`, body);
  const helmSource = (chart = 'demo', version = '0.1.0') => ({ helm: { repository: repo.url, chart, version } });
  const rendersOf = async (objectId: string) =>
    Number(
      (await api.sql.query('SELECT count(DISTINCT render_key) AS n FROM agent_renders WHERE deployment_object_id = $1', [objectId])).rows[0]
        .n,
    );
  const renderCount = async () => Number((await api.sql.query('SELECT count(*) AS n FROM renders')).rows[0].n);
  /** A counter of the api's /metrics (0 before its first increment). */
  async function counter(name: string, labels = ''): Promise<number> {
    const text = await (await fetch(api.metricsUrl)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : 0;
  }
  const expectError = (res: ApiResponse, status: number, code: string) =>
    expect([res.status, res.body?.code], res.text).to.deep.equal([status, code]);

  /** A chart written for one test: Chart.yaml and the given templates. */
  async function chartDir(name: string, templates: Record<string, string>): Promise<string> {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'brokkr-chart-')), name);
    await mkdir(path.join(dir, 'templates'), { recursive: true });
    await writeFile(path.join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
    for (const [file, text] of Object.entries(templates)) await writeFile(path.join(dir, 'templates', file), text);
    return dir;
  }

  before(async () => {
    const [binary, needsNewer, looksUp] = await Promise.all([
      locateRenderer(),
      chartDir('needs-newer', {
        'cm.yaml':
          '{{- if semverCompare "<1.30-0" .Capabilities.KubeVersion.Version }}{{ fail "needs Kubernetes 1.30 or newer" }}{{ end }}\n' +
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n',
      }),
      chartDir('looks-up', {
        'cm.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  n: {{ (lookup "v1" "Namespace" "" "default").metadata.name | quote }}\n',
      }),
    ]);
    repo = await startChartRepository([fixtureChartDir('demo'), needsNewer, looksUp]);
    registry = await startOciRegistry();
    const demo = await packChart(fixtureChartDir('demo'));
    await pushChart(registry, demo.tgz, demo.name, demo.version);
    // One renderer for the file, registered before the api asks whether any is alive.
    renderer = await spawnRenderer({ databaseUrl: infra.db.url, binary });
    api = await startTestApi(infra, { env: { BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: 'true' } });
  });

  after(async () => {
    await api?.stop();
    await renderer?.stop();
    await repo?.close();
    await registry?.stop();
  });

  it("renders a chart for each agent: values from its annotation, .Capabilities from its cluster's facts, once per distinct input", async () => {
    const t = await tenant();
    const eu = await agentOf(t, { region: 'eu' }, 'v1.33.13');
    const euOld = await agentOf(t, { region: 'eu' }, 'v1.28.4');
    const euToo = await agentOf(t, { region: 'eu' }, 'v1.33.13');
    const bare = await agentOf(t, {}, 'v1.33.13');
    const before = await renderCount();
    const res = await postSource(t, {
      source: helmSource(),
      values: { greeting: 'hello {{ agent.annotations.region | default: "world" }}', replicaCount: 2 },
    });
    expect(res.status, res.text).to.equal(201);
    const [a, old, too, none] = await Promise.all([served(eu), served(euOld), served(euToo), served(bare)]);
    expect(a.ConfigMap!.data).to.deep.equal({ greeting: 'hello eu', kubeVersion: 'v1.33.13' });
    expect(old.ConfigMap!.data).to.deep.equal({ greeting: 'hello eu', kubeVersion: 'v1.28.4' });
    expect(too.ConfigMap!.data).to.deep.equal(a.ConfigMap!.data);
    expect(none.ConfigMap!.data!.greeting).to.equal('hello world');
    expect(a.Deployment!.spec).to.deep.nested.include({ replicas: 2 });
    // Four agents, three distinct inputs (eu on 1.33, eu on 1.28, none on 1.33): three renders.
    expect(await rendersOf(res.body.id)).to.equal(3);
    // Brokkr's clients read the render for an agent with nothing (no annotations, the default Capabilities).
    expect(res.body.yaml_content).to.contain('greeting: "hello world"');
    const stored = await renderCount();
    const [rendered, reused] = await Promise.all([
      counter('brokkr_renders_total', 'outcome="ok"'),
      counter('brokkr_render_cache_hits_total'),
    ]);

    // The same inputs again: no render at all, three reused.
    const again = await postSource(t, {
      source: helmSource(),
      values: { greeting: 'hello {{ agent.annotations.region | default: "world" }}', replicaCount: 2 },
    });
    expect(again.status, again.text).to.equal(201);
    expect(await renderCount()).to.equal(stored);
    expect(await counter('brokkr_renders_total', 'outcome="ok"')).to.equal(rendered);
    expect(await counter('brokkr_render_cache_hits_total')).to.equal(reused + 3);
    expect(stored - before).to.be.at.least(3);
  });

  it('relays a chart’s render inputs and the signature naming them only to an agent it is served; layers are relayed for the agent to apply', async () => {
    const t = await tenant();
    const agent = await agentOf(t, {}, 'v1.33.13');
    const other = await agentOf(await tenant());
    const stackName = (await t.client.get<{ name: string }>(`/stacks/${t.stack}`)).body.name;
    const demo = repo.charts.find((c) => c.name === 'demo')!;
    const inputs: RenderInputValues = {
      kind: 'helm',
      archive: demo.tgz,
      values: { greeting: 'signed' },
      options: { release: { name: releaseName(stackName), namespace: 'default' } },
      renderer: 'brokkr-render test',
    };
    const predicate = { stack: t.stack, generator: 'ci', version: 1, kind: 'helm' as const, issuedAt: new Date().toISOString() };
    const signature = signIntent(
      renderInputsContent(inputs),
      { ...predicate, inputs: renderInputDigests(inputs), renderer: inputs.renderer },
      generateSigningKey().privateKey,
    );
    expect((await t.client.post(`/stacks/${t.stack}/signatures`, { signature })).status).to.equal(201);
    const object = await postSource(t, { source: helmSource(), values: { greeting: 'signed' } });
    expect(object.status, object.text).to.equal(201);

    const path = `/agents/${agent.id}/render-inputs/${object.body.id}`;
    const res = await agent.client.get<Record<string, unknown> & { archive: string }>(path);
    expect(res.status, res.text).to.equal(200);
    expect(`sha256:${sha256Hex(Buffer.from(res.body.archive, 'base64'))}`).to.equal(demo.digest);
    expect(res.body).to.deep.include({
      kind: 'helm',
      values: { greeting: 'signed' },
      options: inputs.options,
      not_signable: null,
      signature: JSON.parse(JSON.stringify(signature)),
      capabilities: { kubeVersion: 'v1.33.13', apiVersions: ['apps/v1', 'v1'] },
    });
    expect((await api.admin.get(path)).status).to.equal(200);
    // Another tenant's agent: not its object (404), and not its path (403).
    expectError(await other.client.get(`/agents/${other.id}/render-inputs/${object.body.id}`), 404, 'render_inputs_not_found');
    expectError(await other.client.get(path), 403, 'agent_pak_mismatch');

    // Every layer of the stack is relayed in its signed form (the agent selects by its own identity),
    // and only a signature that names them with the other inputs.
    const layer = await t.client.post(`/stacks/${t.stack}/overrides`, {
      name: 'more',
      values: { replicaCount: 2 },
      selector: { labels: ['x'] },
    });
    expect(layer.status, layer.text).to.equal(201);
    const layers = [{ name: 'more', priority: 0, selector: { labels: ['x'] }, values: { replicaCount: 2 }, patches: null }];
    // No signature names these layers yet: the newest of the same chart and values is relayed, for the agent to refuse naming the layers.
    expect((await agent.client.get(path)).body).to.deep.include({
      layers,
      not_signable: null,
      signature: JSON.parse(JSON.stringify(signature)),
    });
    const withLayers = { ...inputs, layers };
    const layered = signIntent(
      renderInputsContent(withLayers),
      { ...predicate, version: 2, inputs: renderInputDigests(withLayers), renderer: inputs.renderer },
      generateSigningKey().privateKey,
    );
    expect((await t.client.post(`/stacks/${t.stack}/signatures`, { signature: layered })).status).to.equal(201);
    expect((await agent.client.get(path)).body).to.deep.include({ signature: JSON.parse(JSON.stringify(layered)) });
    // References to the agent are relayed as written (as signed): the agent resolves them from its own identity and cluster.
    const values = { who: '{{ agent.name }}', version: '{{ agent.facts.kubernetes_version }}' };
    expect((await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'refs', values })).status).to.equal(201);
    const relayed = (await agent.client.get<{ layers: { name: string; values: unknown }[] }>(path)).body;
    expect(relayed.layers.find((l) => l.name === 'refs')?.values).to.deep.equal(values);
  });

  it('relays plain YAML’s inputs only in a stack with override layers: its content as posted and every layer', async () => {
    const t = await tenant();
    const agent = await agentOf(t);
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n';
    const object = await postSource(t, { yaml_content: yaml });
    expect(object.status, object.text).to.equal(201);
    const path = `/agents/${agent.id}/render-inputs/${object.body.id}`;
    expectError(await agent.client.get(path), 404, 'render_inputs_not_found');
    const patches = [{ target: { kind: 'ConfigMap', name: 'plain' }, merge_patch: { data: { k: 'v' } } }];
    expect((await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'patch', patches })).status).to.equal(201);
    const res = await agent.client.get<Record<string, unknown>>(path);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({
      kind: 'yaml',
      content: yaml,
      layers: [{ name: 'patch', priority: 0, selector: {}, values: null, patches }],
      not_signable: null,
      signature: null,
    });
  });

  it('relays a template-made object’s inputs only to an agent it is served; with other parameters, the signature of the same template version; layers are relayed for the agent to apply', async () => {
    const t = await tenant();
    const agent = await agentOf(t);
    const other = await agentOf(await tenant());
    const content = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ name }}\n';
    const schema = '{"type":"object"}';
    const template = await t.client.post<{ id: string }>('/templates', {
      name: 'relayed',
      template_content: content,
      parameters_schema: schema,
    });
    expect(template.status, template.text).to.equal(201);
    const inputs: RenderInputValues = {
      kind: 'template',
      template: content,
      parametersSchema: schema,
      parameters: { name: 'a' },
      renderer: 'brokkr-templates/1',
    };
    const predicate = { stack: t.stack, generator: 'ci', version: 1, kind: 'template' as const, issuedAt: new Date().toISOString() };
    const signature = signIntent(
      renderInputsContent(inputs),
      { ...predicate, inputs: renderInputDigests(inputs), renderer: inputs.renderer },
      generateSigningKey().privateKey,
    );
    expect((await t.client.post(`/stacks/${t.stack}/signatures`, { signature })).status).to.equal(201);
    const instantiate = (parameters: unknown) =>
      t.client.post<{ id: string }>(`/stacks/${t.stack}/deployment-objects/from-template`, { template_id: template.body.id, parameters });
    const object = await instantiate({ name: 'a' });
    expect(object.status, object.text).to.equal(201);

    const path = `/agents/${agent.id}/render-inputs/${object.body.id}`;
    const res = await agent.client.get<Record<string, unknown>>(path);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({
      kind: 'template',
      template: { content, parameters_schema: schema, parameters: { name: 'a' } },
      options: null,
      not_signable: null,
      signature: JSON.parse(JSON.stringify(signature)),
    });
    expectError(await other.client.get(`/agents/${other.id}/render-inputs/${object.body.id}`), 404, 'render_inputs_not_found');
    // Parameters no signature names: the signature of the same template version, for the agent to refuse as not these inputs.
    const unsigned = await instantiate({ name: 'b' });
    expect(unsigned.status, unsigned.text).to.equal(201);
    const relayed = await agent.client.get<Record<string, unknown>>(`/agents/${agent.id}/render-inputs/${unsigned.body.id}`);
    expect(relayed.body).to.deep.include({ signature: JSON.parse(JSON.stringify(signature)) });

    const patches = [{ target: { kind: 'ConfigMap', name: 'b' }, merge_patch: { data: { more: 'yes' } } }];
    const layer = await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'more', patches });
    expect(layer.status, layer.text).to.equal(201);
    expect((await agent.client.get(path)).body).to.deep.include({
      layers: [{ name: 'more', priority: 0, selector: {}, values: null, patches }],
      not_signable: null,
    });
  });

  it('pins a chart from an OCI registry to its digest and explains the inputs', async () => {
    const t = await tenant();
    const agent = await agentOf(t, {}, 'v1.33.13');
    const res = await postSource(t, { source: { helm: { repository: registry.repository(), chart: 'demo', version: '0.1.0' } } });
    expect(res.status, res.text).to.equal(201);
    expect((await served(agent)).ConfigMap!.data!.greeting).to.equal('hello');
    const explained = await t.client.get<{ inputs: { source: { helm: Record<string, string> }; capabilities: { kubeVersion: string } } }>(
      `/stacks/${t.stack}/agents/${agent.id}/render`,
    );
    expect(explained.status, explained.text).to.equal(200);
    expect(explained.body.inputs.source.helm).to.include({ chart: 'demo', version: '0.1.0' });
    expect(explained.body.inputs.source.helm.digest).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(explained.body.inputs.source.helm.manifest_digest).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(explained.body.inputs.capabilities.kubeVersion).to.equal('v1.33.13');
  });

  it('renders a kustomize overlay sent inline', async () => {
    const t = await tenant();
    const agent = await agentOf(t);
    const archive = (await packDirectory(fixtureKustomizeDir('demo'))).toString('base64');
    const res = await postSource(t, { source: { kustomize: { archive, path: 'overlays/prod' } } });
    expect(res.status, res.text).to.equal(201);
    const docs = await served(agent);
    expect(docs.Deployment!.metadata.name).to.equal('prod-demo');
    expect(docs.Deployment!.spec).to.deep.nested.include({ replicas: 3 });
  });

  it('refuses, naming each agent, a chart that cannot be rendered for some targeted agent, and stores nothing', async () => {
    const t = await tenant();
    await agentOf(t, {}, 'v1.33.13');
    const old = await agentOf(t, {}, 'v1.28.4');
    const res = await postSource(t, { source: helmSource('needs-newer') });
    expectError(res, 422, 'render_failed');
    const failures = (res.body.details as { failures: { agent_id: string; reason: string }[] }).failures;
    expect(failures.map((f) => f.agent_id)).to.deep.equal([old.id]);
    expect(failures[0]!.reason).to.contain('needs Kubernetes 1.30 or newer');
    expect((await t.client.get<unknown[]>(`/stacks/${t.stack}/deployment-objects`)).body).to.deep.equal([]);
  });

  it('refuses a chart that calls lookup (the hub renders without a cluster)', async () => {
    const t = await tenant();
    await agentOf(t);
    const res = await postSource(t, { source: helmSource('looks-up') });
    expectError(res, 422, 'render_failed');
    expect(res.body.message).to.contain('lookup is not supported');
  });

  it('refuses a source that does not exist (404) and one that is malformed (400), before anything is rendered', async () => {
    const t = await tenant();
    expectError(await postSource(t, { source: helmSource('demo', '9.9.9') }), 404, 'source_not_found');
    expectError(
      await postSource(t, { source: { helm: { repository: 'ftp://x/charts', chart: 'demo', version: '1' } } }),
      400,
      'invalid_deployment_object',
    );
    expectError(await postSource(t, { source: helmSource(), yaml_content: 'a: 1\n' }), 400, 'invalid_deployment_object');
  });
});

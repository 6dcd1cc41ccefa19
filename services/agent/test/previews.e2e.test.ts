import { expect } from 'chai';
import { parse } from 'yaml';
import type { Preview, PreviewAgentResult, PreviewObjectResult } from '@brokkr/contracts';
import { eventually, startKubeApiServer, useTestInfra, type KubeApiServer } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { createStack, deploy, registerAgent, startBroker, target, type Broker, type RegisteredAgent } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap, crd, namespace, stream, widget } from './support/manifests.ts';

interface Cluster {
  kube: KubeApiServer;
  kubectl: Kubectl;
  agent: RegisteredAgent;
  proc?: RunningAgentProcess;
}

interface LiveMeta {
  metadata: { resourceVersion: string };
  data: Record<string, string>;
}

/**
 * The fleet-wide diff preview end to end: three of our agents, each against its
 * own real kube-apiserver. The Widget CRD exists on the first two clusters only. A preview that
 * changes one ConfigMap, drops another and adds a Widget reports, per cluster, `changed` with the
 * field diff, `pruned`, and `created` — or, on the third cluster, the schema error of the unknown
 * kind; a preview of the current content is clean everywhere; and nothing changes on any cluster.
 */
describe('fleet-wide diff preview (end to end, three clusters)', function () {
  this.timeout(300_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let clusters: Cluster[];
  let stackId: string;

  const NS = 'default';
  const CURRENT = stream(configMap(NS, 'app', { version: '1' }), configMap(NS, 'old', { keep: 'no' }));
  const PROPOSED = stream(configMap(NS, 'app', { version: '2' }), widget(NS, 'w', 3));

  /** What each cluster holds: the two ConfigMaps' resourceVersions and data, and whether a Widget exists. */
  async function snapshot(c: Cluster) {
    const cm = (name: string) => c.kubectl.get<LiveMeta>(`/api/v1/namespaces/${NS}/configmaps/${name}`);
    const [app, old] = await Promise.all([cm('app'), cm('old')]);
    // Where the kind is not served the apiserver answers a plain-text 404, which the JSON client cannot read.
    const widgets = await c.kubectl.call('GET', `/apis/demo.brokkr.io/v1/namespaces/${NS}/widgets`).catch(() => undefined);
    return {
      app: { rv: app?.metadata.resourceVersion, data: app?.data },
      old: { rv: old?.metadata.resourceVersion, data: old?.data },
      widgets: widgets?.status === 200 ? (widgets.body as { items: unknown[] }).items.length : 'no such kind',
    };
  }

  async function previewOf(yaml: string): Promise<Preview> {
    const created = await broker.admin.post(`/stacks/${stackId}/previews`, { yaml_content: yaml });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect((created.body as Preview).counts.agents).to.equal(3);
    let done: Preview | undefined;
    await eventually(
      async () => {
        done = (await broker.admin.get<Preview>(`/previews/${created.body.id}`)).body;
        return done.status === 'completed';
      },
      { what: 'every agent to report' },
    );
    return done!;
  }

  const resultOf = (preview: Preview, c: Cluster): PreviewAgentResult => preview.agents.find((a) => a.agent_id === c.agent.id)!;
  const object = (r: PreviewAgentResult, kind: string, name: string): PreviewObjectResult | undefined =>
    r.objects.find((o) => o.kind === kind && o.name === name);

  before(async () => {
    broker = await startBroker(infra);
    const kubes = await Promise.all([startKubeApiServer(), startKubeApiServer(), startKubeApiServer()]);
    clusters = [];
    for (const kube of kubes) clusters.push({ kube, kubectl: new Kubectl(kube), agent: await registerAgent(broker.admin) });
    stackId = await createStack(broker.admin);
    for (const c of clusters) await target(broker.admin, c.agent.id, stackId);
    for (const c of clusters.slice(0, 2)) {
      await c.kubectl.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', parse(crd()));
      await eventually(async () => (await c.kubectl.call('GET', '/apis/demo.brokkr.io/v1')).status === 200, { what: 'the Widget CRD' });
    }
    for (const c of clusters) {
      c.proc = await spawnAgent(broker.url, c.agent, c.kube.kubeconfigPath, { env: { BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '5' } });
    }
    await deploy(broker.admin, stackId, CURRENT);
    const applied = async (c: Cluster) => (await snapshot(c)).old.data?.keep === 'no' && (await snapshot(c)).app.data?.version === '1';
    await eventually(async () => (await Promise.all(clusters.map(applied))).every(Boolean), {
      what: 'the current content on every cluster',
    });
  });

  after(async () => {
    await Promise.allSettled((clusters ?? []).map((c) => c.proc?.stop()));
    await Promise.allSettled((clusters ?? []).map((c) => c.kubectl.close()));
    await Promise.allSettled([broker?.stop(), ...(clusters ?? []).map((c) => c.kube.stop())]);
  });

  it('reports changed/pruned/created with the field diff, the unknown kind as a schema error on the third cluster, and changes nothing', async () => {
    const before = await Promise.all(clusters.map(snapshot));
    const preview = await previewOf(PROPOSED);
    expect(preview.counts).to.deep.include({ agents: 3, changes: 2, error: 1, pending: 0 });

    for (const c of clusters.slice(0, 2)) {
      const r = resultOf(preview, c);
      expect(r.status, JSON.stringify(r)).to.equal('changes');
      const app = object(r, 'ConfigMap', 'app')!;
      expect(app).to.include({ action: 'changed', namespace: NS, error: null });
      expect(app.diff).to.deep.equal([{ path: 'data.version', before: '"1"', after: '"2"' }]);
      expect(object(r, 'ConfigMap', 'old')).to.include({ action: 'pruned' });
      expect(object(r, 'Widget', 'w')).to.include({ action: 'created', error: null });
    }
    const third = resultOf(preview, clusters[2]!);
    expect(third.status).to.equal('error');
    expect(object(third, 'Widget', 'w')).to.include({ action: null });
    expect(object(third, 'Widget', 'w')!.error).to.match(/no such resource type.*Widget/);
    expect(object(third, 'ConfigMap', 'app')).to.include({ action: 'changed' });
    expect(object(third, 'ConfigMap', 'old')).to.include({ action: 'pruned' });

    // A dry run writes nothing: same resourceVersions, same data, no Widget anywhere.
    expect(await Promise.all(clusters.map(snapshot))).to.deep.equal(before);
    expect(before.map((s) => s.widgets)).to.deep.equal([0, 0, 'no such kind']);
  });

  it('reports a field the schema rejects as that object error, and a preview of the current content as clean everywhere', async () => {
    const before = await Promise.all(clusters.map(snapshot));
    const rejected = await previewOf(stream(CURRENT, widget(NS, 'w', 3).replace('size: 3', 'size: big')));
    for (const c of clusters.slice(0, 2)) {
      const r = resultOf(rejected, c);
      expect(r.status).to.equal('error');
      expect(object(r, 'Widget', 'w')!.error).to.match(/size/);
      expect(object(r, 'ConfigMap', 'app')).to.include({ action: 'unchanged' });
    }

    const same = await previewOf(CURRENT);
    expect(same.counts).to.deep.include({ agents: 3, clean: 3 });
    for (const r of same.agents) {
      expect(r.objects.map((o) => [o.name, o.action])).to.have.deep.members([
        ['app', 'unchanged'],
        ['old', 'unchanged'],
      ]);
    }
    expect(await Promise.all(clusters.map(snapshot))).to.deep.equal(before);
  });

  it('reports objects in a namespace the preview creates as created (not validated), and creates no namespace', async () => {
    const preview = await previewOf(stream(CURRENT, namespace('fresh'), configMap('fresh', 'inside', { a: '1' })));
    for (const r of preview.agents) {
      expect(r.status, JSON.stringify(r)).to.equal('changes');
      expect(object(r, 'Namespace', 'fresh')).to.include({ action: 'created', error: null });
      const inside = object(r, 'ConfigMap', 'inside')!;
      expect(inside).to.include({ action: 'created', namespace: 'fresh', error: null });
      expect(inside.note).to.match(/namespace fresh is created by this change/);
    }
    for (const c of clusters) expect(await c.kubectl.get('/api/v1/namespaces/fresh')).to.equal(undefined);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { agentConfigSchema, parseEnv } from '@brokkr/config';
import { repoRoot } from '@brokkr/infra';
import { startKubeApiServer, type KubeApiServer } from '@brokkr/testkit';
import { Discovery, KubeClient, KubeObjects, parseManifests, type KubeObject } from '../src/index.ts';

/**
 * k8s/agent (rendered from deploy/helm/brokkr-agent by scripts/render-k8s.ts; test/helm-charts.test.ts
 * checks it is exactly that rendering): every manifest passes a server-side dry-run apply, and its
 * settings parse as the agent's config. namespaced/ is the complete single-namespace install.
 */

const dir = path.join(repoRoot, 'k8s/agent');
const load = (sub: string) =>
  readdirSync(path.join(dir, sub))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseManifests(readFileSync(path.join(dir, sub, f), 'utf8')).map((o) => ({ file: path.join(sub, f), object: o })));

const find = (objects: { object: KubeObject }[], kind: string, name?: string) =>
  objects.map((o) => o.object).filter((o) => o.kind === kind && (!name || o.metadata.name === name));

describe('k8s/agent manifests', function () {
  this.timeout(90_000);
  let kube: KubeApiServer;
  let client: KubeClient;
  let objects: KubeObjects;
  let discovery: Discovery;
  const clusterWide = load('.');
  const namespaced = load('namespaced');

  before(async () => {
    kube = await startKubeApiServer();
    client = await KubeClient.create(kube.kubeConfig);
    objects = new KubeObjects(client);
    discovery = new Discovery(client);
  });

  after(async () => {
    await client?.close();
    await kube?.stop();
  });

  async function dryRunAll(list: { file: string; object: KubeObject }[]): Promise<string[]> {
    const errors: string[] = [];
    for (const { file, object } of list) {
      const resource = await discovery.resolve(object.apiVersion, object.kind);
      if (!resource) {
        errors.push(`${file}: unknown kind ${object.apiVersion} ${object.kind}`);
        continue;
      }
      // Namespaces must exist for the namespaced objects' dry runs: those are really applied.
      const dryRun = object.kind !== 'Namespace';
      await objects.apply(resource, object, dryRun).catch((err: Error) => errors.push(`${file}: ${err.message}`));
    }
    return errors;
  }

  it('the cluster-wide install passes a server-side dry run', async () => {
    expect(clusterWide.map((o) => o.object.kind).sort()).to.deep.equal(
      ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'Namespace', 'Secret', 'ServiceAccount'].sort(),
    );
    expect(await dryRunAll(clusterWide)).to.deep.equal([]);
  });

  it('the single-namespace variant passes a server-side dry run', async () => {
    expect(namespaced.map((o) => o.object.kind).sort()).to.deep.equal(
      ['ConfigMap', 'Deployment', 'Namespace', 'Namespace', 'Role', 'RoleBinding', 'Secret', 'ServiceAccount'].sort(),
    );
    expect(await dryRunAll(namespaced)).to.deep.equal([]);
  });

  it('grants the common workload kinds, never every verb on every group, and only the watched namespace (Pod Security restricted) in the variant', () => {
    const [role] = find(clusterWide, 'ClusterRole');
    const rules = role!.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    expect(rules.filter((r) => r.apiGroups.includes('*') || r.resources.includes('*') || r.verbs.includes('*'))).to.deep.equal([]);
    const granted = rules.flatMap((r) => r.resources.map((res) => `${r.apiGroups[0]}/${res}`));
    expect(granted).to.include.members(['/configmaps', '/secrets', 'apps/deployments', 'batch/jobs', '/pods/log']);
    expect(granted.filter((g) => /^(apiextensions\.k8s\.io|admissionregistration\.k8s\.io)\/|clusterrole/.test(g))).to.deep.equal([]);
    const [config] = find(namespaced, 'ConfigMap');
    const watched = (config!.data as Record<string, string>).BROKKR__AGENT__WATCH_NAMESPACE;
    expect(find(namespaced, 'Role')[0]!.metadata.namespace).to.equal(watched);
    const [ns] = find(namespaced, 'Namespace', watched);
    expect(ns!.metadata.labels).to.include({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
    expect(find(namespaced, 'ClusterRole')).to.deep.equal([]);
  });

  it("holds settings the agent's configuration schema accepts, with probes on its health port", () => {
    for (const list of [clusterWide, namespaced]) {
      const [config] = find(list, 'ConfigMap');
      const data = config!.data as Record<string, string>;
      const known = Object.keys(agentConfigSchema.shape);
      expect(
        Object.keys(data).filter((k) => !known.includes(k)),
        'unknown settings',
      ).to.deep.equal([]);
      const [secret] = find(clusterWide, 'Secret');
      const env = { ...data, ...(secret!.stringData as Record<string, string>), BROKKR__AGENT__HEALTH_PORT: '8080' };
      expect(() => parseEnv(agentConfigSchema, env)).to.not.throw();
    }
    const [deployment] = find(clusterWide, 'Deployment');
    const container = (deployment!.spec as AnyDeploymentSpec).template.spec.containers[0]!;
    const port = container.env.find((e) => e.name === 'BROKKR__AGENT__HEALTH_PORT')!.value;
    expect(container.ports[0]).to.deep.equal({ name: 'health', containerPort: Number(port) });
    expect(container.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'health' });
    expect(container.command).to.deep.equal(['node', 'services/agent/dist/main.js']);
    expect((deployment!.spec as AnyDeploymentSpec).replicas).to.equal(1);
  });
});

interface AnyDeploymentSpec {
  replicas: number;
  template: {
    spec: {
      containers: {
        command: string[];
        env: { name: string; value: string }[];
        ports: { name: string; containerPort: number }[];
        livenessProbe: { httpGet: unknown };
        readinessProbe: { httpGet: unknown };
      }[];
    };
  };
}

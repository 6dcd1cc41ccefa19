import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import type { RenderJob, RenderResult, Renderer } from '../src/index.ts';
import { chartArchive } from './fixtures/archive.ts';
import { testRenderer } from './fixtures/renderer.ts';

const WEB = {
  'Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.2.3\nkubeVersion: ">=1.30.0-0"\n',
  'values.yaml': 'replicas: 1\nimage: nginx\n',
  'crds/widgets.yaml': 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n',
  'templates/_helpers.tpl': '{{- define "web.name" -}}{{ .Release.Name }}-web{{- end -}}\n',
  'templates/deployment.yaml': [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: {{ include "web.name" . }}',
    '  namespace: {{ .Release.Namespace }}',
    '  annotations:',
    '    kube: {{ .Capabilities.KubeVersion.Version | quote }}',
    '    kube-minor: {{ .Capabilities.KubeVersion.Minor | quote }}',
    'spec:',
    '  replicas: {{ .Values.replicas }}',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: web',
    '          image: {{ .Values.image }}',
    '{{- if .Capabilities.APIVersions.Has "policy/v1" }}',
    '---',
    'apiVersion: policy/v1',
    'kind: PodDisruptionBudget',
    'metadata:',
    '  name: {{ include "web.name" . }}',
    '{{- end }}',
  ].join('\n'),
  'templates/serviceaccount.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ include "web.name" . }}\n',
  'templates/hooks.yaml': [
    hook('Job', 'migrate', 'pre-install,pre-upgrade', 5),
    hook('Job', 'prepare', 'pre-install', -1),
    hook('ConfigMap', 'welcome', 'post-install', 0),
    hook('Pod', 'test-connection', 'test', 0),
    hook('Job', 'cleanup', 'pre-delete', 0),
  ].join('---\n'),
  'templates/NOTES.txt': 'Thank you for installing {{ .Chart.Name }}.\n',
};

function hook(kind: string, name: string, events: string, weight: number): string {
  const apiVersion = kind === 'Job' ? 'batch/v1' : 'v1';
  return `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n  annotations:\n    helm.sh/hook: ${events}\n    helm.sh/hook-weight: "${weight}"\n`;
}

const CAPABILITIES = { kubeVersion: 'v1.33.13', apiVersions: ['v1', 'apps/v1', 'batch/v1', 'policy/v1'] };

function helmJob(files: Record<string, string>, extra: Partial<RenderJob> = {}): RenderJob {
  return {
    kind: 'helm',
    archive: chartArchive('web', files),
    release: { name: 'shop', namespace: 'team-a' },
    capabilities: CAPABILITIES,
    ...extra,
  };
}

function yamlOf(result: RenderResult): string {
  if (!result.ok) throw new Error(`render failed (${result.reason}): ${result.error}`);
  return result.yaml;
}

const objects = (yaml: string) =>
  parseAllDocuments(yaml).map(
    (d) => d.toJS() as { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: { replicas?: number } },
  );

describe("@brokkr/render: Helm charts, rendered by Helm v4's own engine in a sandboxed process", function () {
  this.timeout(120_000);
  let renderer: Renderer;

  before(async () => {
    renderer = await testRenderer();
  });
  after(() => renderer.close());

  it('renders with the values, release and Capabilities given, in helm template order (CRDs, pre hooks by weight, manifests by kind, post hooks); test and delete hooks and NOTES.txt left out', async () => {
    const yaml = yamlOf(await renderer.render('tenant-a', helmJob(WEB, { values: { replicas: 3 } })));
    const docs = objects(yaml);
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).to.deep.equal([
      'CustomResourceDefinition/widgets.example.com',
      'Job/prepare',
      'Job/migrate',
      'PodDisruptionBudget/shop-web',
      'ServiceAccount/shop-web',
      'Deployment/shop-web',
      'ConfigMap/welcome',
    ]);
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    expect(deployment.spec?.replicas).to.equal(3);
    expect(deployment.metadata.annotations).to.deep.equal({ kube: 'v1.33.13', 'kube-minor': '33' });
    expect(yaml).to.include('# Source: web/templates/deployment.yaml');
    expect(yaml).not.to.include('Thank you');
  });

  it("follows the Capabilities: without policy/v1 the chart leaves its PodDisruptionBudget out; a cluster older than the chart's kubeVersion is refused", async () => {
    const older = { kubeVersion: 'v1.33.13', apiVersions: ['v1', 'apps/v1'] };
    const kinds = objects(yamlOf(await renderer.render('tenant-a', helmJob(WEB, { capabilities: older })))).map((d) => d.kind);
    expect(kinds).to.include('Deployment').and.not.include('PodDisruptionBudget');
    const tooOld = await renderer.render('tenant-a', helmJob(WEB, { capabilities: { kubeVersion: 'v1.29.4', apiVersions: ['v1'] } }));
    expect(tooOld).to.deep.include({ ok: false, reason: 'invalid' });
    expect(tooOld.ok || tooOld.error).to.match(/requires kubeVersion: >=1\.30\.0-0 which is incompatible with Kubernetes v1\.29\.4/);
  });

  it('gives byte-identical YAML for the same input, whatever order the agent listed its API versions in', async () => {
    const first = yamlOf(await renderer.render('tenant-a', helmJob(WEB)));
    const again = yamlOf(await renderer.render('tenant-b', helmJob(WEB)));
    const reordered = yamlOf(
      await renderer.render(
        'tenant-a',
        helmJob(WEB, { capabilities: { ...CAPABILITIES, apiVersions: [...CAPABILITIES.apiVersions].reverse() } }),
      ),
    );
    expect(again).to.equal(first);
    expect(reordered).to.equal(first);
  });

  it('refuses lookup with a clear error instead of answering empty', async () => {
    const files = {
      'templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  found: {{ lookup "v1" "Secret" "kube-system" "" | len | quote }}\n',
    };
    const result = await renderer.render('tenant-a', helmJob(files));
    expect(result).to.deep.include({ ok: false, reason: 'unsupported' });
    expect(result.ok || result.error).to.include('lookup is not supported: the hub renders without a cluster');
  });

  it('renders vendored subcharts with their values, and refuses a dependency missing from charts/ with a clear error', async () => {
    const parent = {
      'Chart.yaml':
        'apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n  - name: cache\n    version: 0.1.0\n    repository: https://charts.example.com\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parent\n',
    };
    const missing = await renderer.render('tenant-a', helmJob(parent));
    expect(missing).to.deep.include({ ok: false, reason: 'invalid' });
    expect(missing.ok || missing.error).to.match(/dependencies not vendored: cache .*missing in charts\//);

    const vendored = {
      ...parent,
      'charts/cache/Chart.yaml': 'apiVersion: v2\nname: cache\nversion: 0.1.0\n',
      'charts/cache/values.yaml': 'size: 1\n',
      'charts/cache/templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cache-{{ .Values.size }}\n',
    };
    const yaml = yamlOf(await renderer.render('tenant-a', helmJob(vendored, { values: { cache: { size: 7 } } })));
    expect(objects(yaml).map((d) => d.metadata.name)).to.have.members(['parent', 'cache-7']);
  });

  it("validates values against the chart's values.schema.json", async () => {
    const files = {
      ...WEB,
      'values.schema.json': JSON.stringify({ type: 'object', properties: { replicas: { type: 'integer', maximum: 5 } } }),
    };
    const result = await renderer.render('tenant-a', helmJob(files, { values: { replicas: 50 } }));
    expect(result).to.deep.include({ ok: false, reason: 'invalid' });
    expect(result.ok || result.error).to.match(/schema.*replicas/s);
  });

  it("names the engines and the renderer's sources in its version", () => {
    expect(renderer.version).to.match(/^brokkr-render \d+\.\d+\.\d+\+[0-9a-f]{16} helm v4\.\d+\.\d+ kustomize v0\.\d+\.\d+ go1\.\d+/);
  });
});

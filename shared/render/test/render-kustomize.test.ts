import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import type { RenderJob, Renderer } from '../src/index.ts';
import { treeArchive } from './fixtures/archive.ts';
import { testRenderer } from './fixtures/renderer.ts';

const BASE = {
  'base/kustomization.yaml': 'resources:\n  - deployment.yaml\n  - service.yaml\n',
  'base/deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n',
  'base/service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n',
};

const PROD = {
  ...BASE,
  'overlays/prod/kustomization.yaml': [
    'namePrefix: prod-',
    'namespace: shop',
    'resources:',
    '  - ../../base',
    'labels:',
    '  - pairs:',
    '      env: prod',
    'patches:',
    '  - path: replicas.yaml',
    'configMapGenerator:',
    '  - name: settings',
    '    literals:',
    '      - mode=fast',
  ].join('\n'),
  'overlays/prod/replicas.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n',
};

function overlay(files: Record<string, string>, path = 'overlays/prod'): RenderJob {
  return { kind: 'kustomize', archive: treeArchive(files), path };
}

function withOverlay(kustomization: string, extra: Record<string, string> = {}): RenderJob {
  return overlay({ ...BASE, 'overlays/prod/kustomization.yaml': kustomization, ...extra });
}

describe("@brokkr/render: kustomize overlays, rendered by kustomize's krusty on an in-memory copy of the archive", function () {
  this.timeout(120_000);
  let renderer: Renderer;

  before(async () => {
    renderer = await testRenderer();
  });
  after(() => renderer.close());

  it('renders an overlay over its base: prefix, namespace, labels, a patch and a generated ConfigMap', async () => {
    const result = await renderer.render('tenant-a', overlay(PROD));
    if (!result.ok) throw new Error(result.error);
    const docs = parseAllDocuments(result.yaml).map(
      (d) =>
        d.toJS() as {
          kind: string;
          metadata: { name: string; namespace: string; labels: Record<string, string> };
          spec?: { replicas?: number };
        },
    );
    expect(docs.map((d) => `${d.kind}/${d.metadata.namespace}/${d.metadata.name}`)).to.have.members([
      'Deployment/shop/prod-web',
      'Service/shop/prod-web',
      'ConfigMap/shop/prod-settings-' +
        docs
          .find((d) => d.kind === 'ConfigMap')!
          .metadata.name.split('-')
          .pop(),
    ]);
    expect(docs.every((d) => d.metadata.labels.env === 'prod')).to.equal(true);
    expect(docs.find((d) => d.kind === 'Deployment')!.spec?.replicas).to.equal(4);
    const again = await renderer.render('tenant-b', overlay(PROD));
    expect(again).to.deep.equal(result);
  });

  it('refuses remote bases and resources — a URL, a git repository, a GitHub shorthand — with a clear error, before anything is fetched', async () => {
    for (const remote of [
      'https://raw.example.com/team/app/deploy.yaml',
      'https://github.com/example/app//deploy?ref=v1.0.0',
      'git@github.com:example/app.git',
      'github.com/example/app/deploy?ref=main',
      'ssh://git@git.example.com/app.git//base',
    ]) {
      const result = await renderer.render('tenant-a', withOverlay(`resources:\n  - ../../base\n  - ${remote}\n`));
      expect(result, remote).to.deep.include({ ok: false, reason: 'unsupported' });
      expect(result.ok || result.error, remote).to.include('remote bases and resources (URLs, git repositories) are not supported');
    }
  });

  it('refuses a component or base that is not in the archive', async () => {
    const result = await renderer.render('tenant-a', withOverlay('resources:\n  - ../../missing\n'));
    expect(result).to.deep.include({ ok: false, reason: 'invalid' });
    expect(result.ok || result.error).to.include('"../../missing" is not a file or directory in the archive');
  });

  it('runs no plugin that is not builtin: an exec KRM function, a container function, a Go/exec plugin by kind, and no Helm inflation', async () => {
    const execFunction =
      'apiVersion: example.com/v1\nkind: Runner\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n';
    const containerFunction =
      'apiVersion: example.com/v1\nkind: Runner\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/fn:1\n';
    const goPlugin = 'apiVersion: someteam.example.com/v1\nkind: SecretsFromVault\nmetadata:\n  name: x\n';
    for (const [field, config] of [
      ['generators', execFunction],
      ['transformers', containerFunction],
      ['generators', goPlugin],
      ['validators', execFunction],
    ] as const) {
      const result = await renderer.render(
        'tenant-a',
        withOverlay(`resources:\n  - ../../base\n${field}:\n  - plugin.yaml\n`, { 'overlays/prod/plugin.yaml': config }),
      );
      expect(result, `${field}: ${config}`).to.deep.include({ ok: false, reason: 'unsupported' });
      expect(result.ok || result.error).to.match(/external plugins disabled|only builtin plugins/);
    }
    const helm = await renderer.render(
      'tenant-a',
      withOverlay('helmCharts:\n  - name: web\n    repo: https://charts.example.com\n    version: 1.0.0\n'),
    );
    expect(helm).to.deep.include({ ok: false, reason: 'unsupported' });
    expect(helm.ok || helm.error).to.include('helmCharts are not supported');
  });

  it("loads files only from inside the kustomization's directory (LoadRestrictionsRootOnly)", async () => {
    const result = await renderer.render(
      'tenant-a',
      withOverlay('resources:\n  - ../../base\npatches:\n  - path: ../../base/deployment.yaml\n'),
    );
    expect(result).to.deep.include({ ok: false, reason: 'invalid' });
    expect(result.ok || result.error).to.include('is not in or below');
  });
});

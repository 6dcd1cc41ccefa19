import { expect } from 'chai';
import { PREVIEW_LIMITS } from '@brokkr/contracts';
import { fieldDiff } from '../src/previews/diff.ts';
import { CHECKSUM_ANNOTATION, OBJECT_ID_ANNOTATION } from '../src/manifest/keys.ts';

const live = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: 'u-1',
    resourceVersion: '10',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'brokkr-agent' }],
    annotations: { [CHECKSUM_ANNOTATION]: 'old', [OBJECT_ID_ANNOTATION]: 'obj-1', team: 'a' },
  },
  spec: { replicas: 1, template: { spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } },
  status: { readyReplicas: 1 },
  ...extra,
});

/** The compact field diff a preview reports per object (services/agent/src/previews/diff.ts). */
describe('preview field diff', () => {
  it('ignores server bookkeeping, status and our per-version stamp; lists the changed leaf paths with JSON values', () => {
    const after = live();
    after.metadata = {
      ...after.metadata,
      resourceVersion: '11',
      generation: 4,
      managedFields: [],
      annotations: { [CHECKSUM_ANNOTATION]: 'new', [OBJECT_ID_ANNOTATION]: 'obj-2', team: 'a' },
    };
    after.status = { readyReplicas: 0 };
    expect(fieldDiff(live(), after)).to.deep.equal({ changes: [], truncated: false });

    after.spec = { replicas: 3, template: { spec: { containers: [{ name: 'main', image: 'nginx:1.28' }] } } };
    expect(fieldDiff(live(), after).changes).to.deep.equal([
      { path: 'spec.replicas', before: '1', after: '3' },
      { path: 'spec.template.spec.containers[0].image', before: '"nginx:1.27"', after: '"nginx:1.28"' },
    ]);
  });

  it('names keys that are not identifiers in brackets, and shows added and removed fields as null on one side', () => {
    const before = live();
    const after = live();
    const annotations: Record<string, string> = { ...after.metadata.annotations, 'example.com/owner': 'b' };
    delete annotations.team;
    (after.metadata as { annotations: Record<string, string> }).annotations = annotations;
    expect(fieldDiff(before, after).changes).to.deep.equal([
      { path: 'metadata.annotations.team', before: '"a"', after: null },
      { path: 'metadata.annotations["example.com/owner"]', before: null, after: '"b"' },
    ]);
  });

  it('never copies Secret values, bounds the number of paths and the length of values', () => {
    const secret = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data });
    expect(fieldDiff(secret({ password: 'b2xk' }), secret({ password: 'bmV3' })).changes).to.deep.equal([
      { path: 'data.password', before: null, after: null },
    ]);

    const many = (v: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, v])),
    });
    const { changes, truncated } = fieldDiff(many('a'), many('b'.repeat(1000)));
    expect(changes).to.have.length(PREVIEW_LIMITS.diffPaths);
    expect(truncated).to.equal(true);
    expect(changes[0]!.after!.length).to.equal(PREVIEW_LIMITS.valueChars + 1);
    expect(changes[0]!.after!.endsWith('…')).to.equal(true);
  });
});

/**
 * A Deployment being adopted (brokkr.io/adopt-existing), as a real kube-apiserver answers the
 * agent's server-side apply dry run: its lists and maps are merged, so the result holds the live
 * env item DB_PASSWORD, the live args, the live sidecar and the live finalizer beside what the
 * manifest sets; only `managedFields` tells the two apart. Trimmed of the defaults that play no part.
 */
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value: string }[];
  resources?: Record<string, unknown>;
}

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
}

function adoptedDeployment() {
  const liveMain: Container = {
    name: 'main',
    image: 'nginx:1.27',
    args: ['--token=live-arg-secret'],
    env: [
      { name: 'DB_PASSWORD', value: 'live-env-secret' },
      { name: 'MODE', value: 'live' },
    ],
    resources: { limits: { cpu: '1' } },
  };
  const sidecar: Container = { name: 'sidecar', image: 'vault:live', env: [{ name: 'VAULT_TOKEN', value: 'live-sidecar-secret' }] };
  const theirs: ManagedFieldsEntry = {
    manager: 'kubectl-edit',
    operation: 'Update',
    fieldsV1: {
      'f:metadata': { 'f:finalizers': { '.': {}, 'v:"example.com/live-finalizer"': {} }, 'f:labels': { '.': {}, 'f:team': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"main"}': {
                '.': {},
                'f:args': {},
                'f:env': {
                  '.': {},
                  'k:{"name":"DB_PASSWORD"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                  'k:{"name":"MODE"}': { '.': {}, 'f:name': {} },
                },
                'f:image': {},
                'f:name': {},
                'f:resources': { '.': {}, 'f:limits': { '.': {}, 'f:cpu': {} } },
              },
              'k:{"name":"sidecar"}': {
                '.': {},
                'f:env': { '.': {}, 'k:{"name":"VAULT_TOKEN"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                'f:image': {},
                'f:name': {},
              },
            },
          },
        },
      },
    },
  };
  const ours: ManagedFieldsEntry = {
    manager: 'brokkr-agent',
    operation: 'Apply',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': { 'f:brokkr.io/adopt-existing': {} },
        'f:finalizers': { 'v:"example.com/mine"': {} },
        'f:labels': { 'f:k8s.brokkr.io/stack': {} },
      },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"main"}': {
                '.': {},
                'f:env': {
                  'k:{"name":"LOG"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                  'k:{"name":"MODE"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                },
                'f:image': {},
                'f:name': {},
                'f:resources': {},
              },
            },
          },
        },
      },
    },
  };
  const object = (
    metadata: { managedFields: ManagedFieldsEntry[]; [field: string]: unknown },
    replicas: number,
    containers: Container[],
  ) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', uid: 'u-1', resourceVersion: '185', ...metadata },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers } } },
  });
  const live = object({ labels: { team: 'finance' }, finalizers: ['example.com/live-finalizer'], managedFields: [theirs] }, 1, [
    liveMain,
    sidecar,
  ]);
  const dryRun = object(
    {
      labels: { 'k8s.brokkr.io/stack': 'x', team: 'finance' },
      annotations: { 'brokkr.io/adopt-existing': 'true' },
      finalizers: ['example.com/live-finalizer', 'example.com/mine'],
      managedFields: [ours, theirs],
    },
    2,
    [
      {
        ...liveMain,
        image: 'nginx:1.28',
        env: [
          { name: 'DB_PASSWORD', value: 'live-env-secret' },
          { name: 'LOG', value: 'debug' },
          { name: 'MODE', value: 'mine' },
        ],
      },
      sidecar,
    ],
  );
  return { live, dryRun, ours };
}

/** Every value of the live object that the manifest does not set. */
const LIVE_ONLY = [
  'live-env-secret',
  'live-arg-secret',
  'live-sidecar-secret',
  'vault:live',
  'example.com/live-finalizer',
  'finance',
  '"cpu"',
];

describe('preview field diff of an object being adopted: no value of the live object, lists included', () => {
  const expectNoLiveValue = (changes: unknown) => {
    const text = JSON.stringify(changes);
    for (const value of LIVE_ONLY) expect(text, `a live value (${value}) in the preview`).to.not.include(value);
  };

  it('shows a merged list (env, finalizers) as the items of the manifest only, each changed field with its new value', () => {
    const { live, dryRun } = adoptedDeployment();
    const { changes } = fieldDiff(live, dryRun, { withholdBefore: true });
    expectNoLiveValue(changes);
    expect(changes).to.deep.equal([
      { path: 'metadata.labels["k8s.brokkr.io/stack"]', before: null, after: '"x"' },
      { path: 'metadata.finalizers', before: null, after: '["example.com/mine"]' },
      { path: 'metadata.annotations', before: null, after: '{"brokkr.io/adopt-existing":"true"}' },
      { path: 'spec.replicas', before: null, after: '2' },
      { path: 'spec.template.spec.containers[0].image', before: null, after: '"nginx:1.28"' },
      {
        path: 'spec.template.spec.containers[0].env',
        before: null,
        after: '[{"name":"LOG","value":"debug"},{"name":"MODE","value":"mine"}]',
      },
    ]);
    // The stack's own object keeps showing both sides (the live values are its own).
    expect(JSON.stringify(fieldDiff(live, dryRun).changes)).to.include('live-env-secret');
  });

  it('a new container beside the live one: the list holds the fields of the manifest only, not a field another writer holds inside one of ours', () => {
    const { live, dryRun, ours } = adoptedDeployment();
    const extra = { name: 'extra', image: 'busybox:1.36' };
    dryRun.spec.template.spec.containers.push(extra);
    const containers = (ours.fieldsV1['f:spec'] as { 'f:template': { 'f:spec': { 'f:containers': Record<string, unknown> } } })[
      'f:template'
    ]['f:spec']['f:containers'];
    containers['k:{"name":"extra"}'] = {
      '.': {},
      'f:image': {},
      'f:name': {},
    };
    const { changes } = fieldDiff(live, dryRun, { withholdBefore: true });
    expectNoLiveValue(changes);
    expect(changes.find((c) => c.path === 'spec.template.spec.containers')?.after).to.equal(
      JSON.stringify([
        {
          name: 'main',
          image: 'nginx:1.28',
          env: [
            { name: 'LOG', value: 'debug' },
            { name: 'MODE', value: 'mine' },
          ],
        },
        extra,
      ]),
    );
  });

  it('a list whose items moved: a field at an index shows a value only where the manifest set the item there', () => {
    const { live, dryRun } = adoptedDeployment();
    const [main] = dryRun.spec.template.spec.containers;
    main!.env = [
      { name: 'MODE', value: 'mine' },
      { name: 'DB_PASSWORD', value: 'live-env-secret' },
    ];
    const { changes } = fieldDiff(live, dryRun, { withholdBefore: true });
    expectNoLiveValue(changes);
    const env = changes.filter((c) => c.path.startsWith('spec.template.spec.containers[0].env'));
    expect(env).to.deep.equal([
      { path: 'spec.template.spec.containers[0].env[0].name', before: null, after: '"MODE"' },
      { path: 'spec.template.spec.containers[0].env[0].value', before: null, after: '"mine"' },
      { path: 'spec.template.spec.containers[0].env[1].name', before: null, after: null },
      { path: 'spec.template.spec.containers[0].env[1].value', before: null, after: null },
    ]);
  });

  it('without an entry of the agent in managedFields nothing tells the values of the manifest apart: paths only', () => {
    const { live, dryRun } = adoptedDeployment();
    dryRun.metadata.managedFields = dryRun.metadata.managedFields.filter((m) => m.manager !== 'brokkr-agent');
    const { changes } = fieldDiff(live, dryRun, { withholdBefore: true });
    expect(changes.map((c) => c.path)).to.include('spec.template.spec.containers[0].env');
    expect(changes.every((c) => c.before === null && c.after === null)).to.equal(true);
  });
});

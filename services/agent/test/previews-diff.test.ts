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

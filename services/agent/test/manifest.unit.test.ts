import { expect } from 'chai';
import { ManifestError, parseManifests, stamp } from '../src/index.ts';

describe('agent manifests', () => {
  describe('parseManifests', () => {
    it('keeps document order and skips empty and null documents', () => {
      const objects = parseManifests(
        '---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n~\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n',
      );
      expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(['ConfigMap/a', 'Namespace/n']);
    });

    it('accepts an empty stream (a deletion marker has no content)', () => {
      expect(parseManifests('')).to.deep.equal([]);
      expect(parseManifests('# only a comment\n')).to.deep.equal([]);
    });

    it('fails the whole manifest for a document that is not an object', () => {
      expect(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- a list\n')).to.throw(
        ManifestError,
        /document 2 is not a mapping/,
      );
      expect(() => parseManifests('just text')).to.throw(ManifestError, /not a mapping/);
    });

    it('requires apiVersion, kind and metadata.name, and string label and annotation values', () => {
      expect(() => parseManifests('kind: ConfigMap\nmetadata: {name: a}')).to.throw(/no apiVersion/);
      expect(() => parseManifests('apiVersion: v1\nmetadata: {name: a}')).to.throw(/no kind/);
      expect(() => parseManifests('apiVersion: v1\nkind: Pod\nmetadata: {generateName: x-}')).to.throw(/no metadata.name/);
      expect(() => parseManifests('apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {n: 1}}')).to.throw(
        /labels must map strings to strings/,
      );
    });

    it('rejects syntax errors and duplicate keys', () => {
      expect(() => parseManifests('apiVersion: v1\nkind: [unclosed\n')).to.throw(ManifestError, /YAML error/);
      expect(() => parseManifests('apiVersion: v1\napiVersion: v2\nkind: A\nmetadata: {name: a}\n')).to.throw(ManifestError);
    });

    it('stops an alias bomb instead of expanding it', () => {
      const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
      for (let i = 1; i < 9; i++)
        levels.push(
          `l${i}: &l${i} [${Array(9)
            .fill(i === 1 ? '*a' : `*l${i - 1}`)
            .join(',')}]`,
        );
      const bomb = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: boom}\ndata:\n${levels.map((l) => `  ${l}`).join('\n')}\n`;
      expect(() => parseManifests(bomb)).to.throw(ManifestError, /alias/i);
    });

    it('resolves a few plain anchors', () => {
      const [obj] = parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {app: x}, annotations: *l}\n');
      expect(obj!.metadata.annotations).to.deep.equal({ app: 'x' });
    });
  });

  describe('stamp', () => {
    const ctx = { stackId: 'stack-1', checksum: 'abc', objectId: 'do-1', agentId: 'agent-1' };
    const [source] = parseManifests(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {app: x, brokkr.io/owner-id: someone}\n  annotations: {note: keep}\n',
    );

    it('adds our labels and annotations (ours win) without touching the source object', () => {
      const out = stamp(source!, ctx, { owned: true, namespace: 'ns', adopted: false });
      expect(out.metadata.labels).to.deep.equal({ app: 'x', 'k8s.brokkr.io/stack': 'stack-1', 'brokkr.io/owner-id': 'agent-1' });
      expect(out.metadata.annotations).to.deep.equal({
        note: 'keep',
        'k8s.brokkr.io/stack': 'stack-1',
        'k8s.brokkr.io/deployment-checksum': 'abc',
        'brokkr.io/deployment-object-id': 'do-1',
        'k8s.brokkr.io/last-config-applied': 'abc',
        'brokkr.io/owner-id': 'agent-1',
      });
      expect(out.metadata.namespace).to.equal('ns');
      expect(source!.metadata.labels).to.have.property('brokkr.io/owner-id', 'someone');
    });

    it('marks an adopted object, and gives a confined Namespace the Pod Security labels whatever the manifest says', () => {
      const adopted = stamp(source!, ctx, { owned: true, namespace: 'ns', adopted: true });
      expect(adopted.metadata.annotations).to.have.property('brokkr.io/adopted', 'true');
      const [ns] = parseManifests(
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: t\n  labels: {pod-security.kubernetes.io/enforce: privileged}\n',
      );
      const confined = stamp(ns!, { ...ctx, podSecurity: 'baseline' }, { owned: true, namespace: undefined, adopted: false });
      expect(confined.metadata.labels).to.include({
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/audit': 'baseline',
        'pod-security.kubernetes.io/warn': 'baseline',
      });
      expect(stamp(source!, ctx, { owned: true, namespace: 'ns', adopted: false }).metadata.annotations).to.not.have.property(
        'brokkr.io/adopted',
      );
    });

    it("leaves the owner off someone else's object, and the namespace off a cluster-scoped one", () => {
      const out = stamp({ ...source!, metadata: { ...source!.metadata, namespace: 'x' } }, ctx, {
        owned: false,
        namespace: undefined,
        adopted: false,
      });
      expect(out.metadata.labels).to.not.have.property('brokkr.io/owner-id');
      expect(out.metadata.annotations).to.not.have.property('brokkr.io/owner-id');
      expect(out.metadata.labels).to.have.property('k8s.brokkr.io/stack', 'stack-1');
      expect(out.metadata).to.not.have.property('namespace');
    });
  });
});

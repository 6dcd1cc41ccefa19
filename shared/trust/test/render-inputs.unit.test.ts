import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  buildRoot,
  canonicalJson,
  checkIntent,
  generateSigningKey,
  renderInputDigests,
  renderInputsContent,
  renderInputsMismatch,
  sha256Hex,
  signIntent,
  type IntentPredicate,
  type RenderedKind,
  type RenderInputValues,
  type TrustView,
} from '@brokkr/trust';

const stack = randomUUID();
const ci = generateSigningKey();
const root = buildRoot({
  version: 1,
  rootKeys: [generateSigningKey().privateKey],
  threshold: 1,
  generators: [{ name: 'ci', keys: [ci.privateKey], stacks: [stack] }],
});
const view: TrustView = {
  root,
  revocations: undefined,
  stale: undefined,
  keyless: undefined,
  identity: { name: 'a', cluster: 'c', labels: [] },
  now: new Date(),
};

const chart: RenderInputValues = {
  kind: 'helm',
  archive: Buffer.from('\x1f\x8b chart bytes'),
  values: { replicaCount: 2, greeting: 'hi', nested: { b: 1, a: [1, { y: 2, x: 1 }] } },
  options: { release: { name: 'hello', namespace: 'default' } },
  renderer: 'brokkr-render 1.0.0',
};

function signed(inputs: RenderInputValues) {
  const predicate: IntentPredicate = {
    stack,
    generator: 'ci',
    version: 1,
    kind: inputs.kind,
    inputs: renderInputDigests(inputs),
    renderer: inputs.renderer,
    issuedAt: new Date().toISOString(),
  };
  return signIntent(renderInputsContent(inputs), predicate, ci.privateKey);
}

const check = (inputs: RenderInputValues, signature: unknown, rendered: RenderedKind = inputs.kind) =>
  checkIntent(view, { stackId: stack, content: renderInputsContent(inputs), deletion: false, signed: signature, rendered }, undefined);

describe('signed render inputs: a chart or an overlay signed by what it is rendered from', () => {
  it('writes one canonical JSON whatever the key order, and leaves undefined out', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined, x: null }], c: 'é' } })).to.equal(
      '{"a":{"c":"é","d":[2,{"x":null,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ x: 1, y: 2 })).to.equal(canonicalJson({ y: 2, x: 1 }));
  });

  it('digests the archive bytes, the values (canonical) and the options; the subject is the digest of their document', () => {
    const digests = renderInputDigests(chart);
    expect(digests.map((d) => d.name)).to.deep.equal(['source', 'values', 'options']);
    expect(digests[0]!.digest.sha256).to.equal(sha256Hex(chart.archive));
    const reordered = { ...chart, values: { nested: { a: [1, { x: 1, y: 2 }], b: 1 }, greeting: 'hi', replicaCount: 2 } };
    expect(renderInputsContent(reordered)).to.equal(renderInputsContent(chart));
    const overlay = renderInputDigests({ kind: 'kustomize', archive: chart.archive, options: { path: 'overlays/prod' }, renderer: 'r' });
    expect(overlay.map((d) => d.name)).to.deep.equal(['source', 'options']);
  });

  it('takes a chart signed by its inputs, as the agent rebuilds them from the bytes it was relayed', () => {
    const verdict = check(chart, signed(chart));
    expect(verdict.ok).to.equal(true);
    if (verdict.ok)
      expect(renderInputsMismatch(verdict.statement.predicate, renderInputDigests(chart), chart.renderer)).to.equal(undefined);
  });

  it('refuses one byte changed in the archive, other values, another release, or the signature read as another kind', () => {
    const signature = signed(chart);
    const archive = Buffer.from(chart.archive);
    archive.writeUInt8(archive.readUInt8(archive.length - 1) ^ 1, archive.length - 1);
    for (const other of [
      { ...chart, archive },
      { ...chart, values: { ...chart.values, replicaCount: 3 } },
      { ...chart, options: { release: { name: 'other', namespace: 'default' } } },
      { ...chart, renderer: 'brokkr-render 2.0.0' },
    ]) {
      const verdict = check(other, signature);
      expect(verdict.ok).to.equal(false);
      if (!verdict.ok) expect(verdict.refusal.reason).to.equal('signature_invalid');
    }
    const asKustomize = check(chart, signature, 'kustomize');
    expect(asKustomize.ok).to.equal(false);
    if (!asKustomize.ok) expect(asKustomize.refusal.detail).to.match(/signed as kind helm/);
  });

  it('names the input that differs, and refuses another renderer than the one signed', () => {
    const signedInputs = { inputs: renderInputDigests(chart), renderer: chart.renderer };
    expect(renderInputsMismatch(signedInputs, renderInputDigests({ ...chart, values: {} }), chart.renderer)).to.match(/^its values/);
    expect(renderInputsMismatch(signedInputs, renderInputDigests(chart), 'brokkr-render 9')).to.match(
      /signed for renderer brokkr-render 1\.0\.0/,
    );
  });

  it('a template: digests its text, parameters schema and parameters (canonical); other parameters are named as the input that differs', () => {
    const template: RenderInputValues = {
      kind: 'template',
      template: 'kind: ConfigMap\nmetadata: {name: "{{ name }}"}\n',
      parametersSchema: '{"type":"object"}',
      parameters: { name: 'a', replicas: 2 },
      renderer: 'brokkr-templates/1',
    };
    const digests = renderInputDigests(template);
    expect(digests.map((d) => d.name)).to.deep.equal(['template', 'parameters_schema', 'parameters']);
    expect(digests[2]!.digest.sha256).to.equal(sha256Hex('{"name":"a","replicas":2}'));
    expect(renderInputDigests({ ...template, parameters: { replicas: 2, name: 'a' } })).to.deep.equal(digests);
    expect(check(template, signed(template)).ok).to.equal(true);
    const other = renderInputDigests({ ...template, parameters: { name: 'b', replicas: 2 } });
    expect(renderInputsMismatch({ inputs: digests, renderer: template.renderer }, other, template.renderer)).to.match(/^its parameters /);
  });
  it('signs the stack’s override layers as one more input: a layer changed, added or dropped by the hub is not the signed set', () => {
    const layers = [{ name: 'prod', priority: 0, selector: { labels: ['env-prod'] }, values: { replicaCount: 5 }, patches: null }];
    const withLayers: RenderInputValues = { ...chart, layers };
    const signature = signed(withLayers);
    expect(renderInputDigests(withLayers).map((d) => d.name)).to.deep.equal(['source', 'values', 'options', 'layers']);
    expect(renderInputDigests({ ...chart, layers: [] }).map((d) => d.name)).to.deep.equal(['source', 'values', 'options']);
    expect(check(withLayers, signature).ok).to.equal(true);
    const changed = { ...withLayers, layers: [{ ...layers[0]!, values: { replicaCount: 50 } }] };
    const added = { ...withLayers, layers: [...layers, { name: 'more', priority: 1, selector: {}, values: null, patches: null }] };
    for (const relayed of [changed, added, chart]) expect(check(relayed, signature).ok).to.equal(false);
    const verdict = check(withLayers, signature);
    if (!verdict.ok) throw new Error('admitted above');
    expect(renderInputsMismatch(verdict.statement.predicate, renderInputDigests(changed), chart.renderer)).to.match(/^its layers /);
    expect(renderInputsMismatch(verdict.statement.predicate, renderInputDigests(chart), chart.renderer)).to.equal(
      'it was signed with other inputs than the ones relayed',
    );
  });
  it('plain YAML under override layers: digests its content and the layers; other content is named as the input that differs', () => {
    const yaml: RenderInputValues = {
      kind: 'yaml',
      content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
      renderer: 'brokkr-overrides/1',
      layers: [{ name: 'l', priority: 0, selector: {}, values: null, patches: null }],
    };
    expect(renderInputDigests(yaml).map((d) => d.name)).to.deep.equal(['content', 'layers']);
    const signature = signed(yaml);
    expect(check(yaml, signature).ok).to.equal(true);
    const other = { ...yaml, content: `${yaml.content}data: {k: v}\n` };
    expect(check(other, signature).ok).to.equal(false);
    expect(check(yaml, signature, 'helm').ok).to.equal(false);
  });
});

import { expect } from 'chai';
import { applyPatches, layersFor, signedLayers, valuesAfter, type OverrideLayer } from '@brokkr/overrides';

const stored = (name: string, priority: number, selector: OverrideLayer['selector'], values: Record<string, unknown> | null = null) => ({
  id: `${name}-id`,
  name,
  priority,
  selector,
  layer_values: values,
  patches: null,
});

describe('override layers (@brokkr/overrides)', () => {
  const agent = { id: 'a1', labels: ['env-prod', 'eu'], annotations: { region: 'eu-west' } };

  it('selects by id, every label and every annotation, and orders by priority then name', () => {
    const layers = [
      stored('z', 0, {}),
      stored('prod', 10, { labels: ['env-prod'] }),
      stored('dev', 10, { labels: ['env-dev'] }),
      stored('west', 10, { annotations: { region: 'eu-west' } }),
      stored('other-agent', 0, { agent_ids: ['b2'] }),
      stored('a', 0, { agent_ids: ['A1'] }),
    ];
    expect(layersFor(layers, agent).map((l) => l.name)).to.deep.equal(['a', 'z', 'prod', 'west']);
  });

  it('merges values as helm does: maps key by key, lists replaced, null removes', () => {
    const merged = valuesAfter({ a: { b: 1, c: 2 }, list: [1, 2], gone: true }, [{ a: { c: 3 }, list: [9] }, null, { gone: null }]);
    expect(merged).to.deep.equal({ a: { b: 1, c: 3 }, list: [9] });
  });

  it('writes the signed form the same from a file and from the hub’s rows: fields named as on the wire, one order, no ids', () => {
    const fromHub = signedLayers([stored('b', 1, {}, { x: 1 }), stored('a', 1, { labels: ['eu'] })]);
    const fromFile = signedLayers([
      { name: 'a', priority: 1, selector: { labels: ['eu'] } },
      { name: 'b', priority: 1, selector: {}, values: { x: 1 } },
    ]);
    expect(fromHub).to.deep.equal(fromFile);
    expect(fromHub).to.deep.equal([
      { name: 'a', priority: 1, selector: { labels: ['eu'] }, values: null, patches: null },
      { name: 'b', priority: 1, selector: {}, values: { x: 1 }, patches: null },
    ]);
  });

  it('patches the documents it names, and fails on a target not in the render', () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n';
    const patched = applyPatches(yaml, [{ target: { kind: 'ConfigMap', name: 'a' }, merge_patch: { data: { k: 'w' } } }]);
    expect(patched).to.include('k: w');
    expect(applyPatches(yaml, [])).to.equal(yaml);
    expect(() => applyPatches(yaml, [{ target: { kind: 'ConfigMap', name: 'b' }, merge_patch: {} }])).to.throw(/no ConfigMap 'b'/);
  });
});

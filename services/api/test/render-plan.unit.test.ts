import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { AgentView } from '@brokkr/overrides';
import { DEFAULT_CAPABILITIES } from '@brokkr/overrides';
import type { OverrideLayer } from '@brokkr/overrides';
import { distinctInputs, planRenders, type RenderInput, type RenderSource } from '../src/rendering/plan.ts';

const VERSION = 'brokkr-render 1.0.0+test';

const agentNamed = (name: string, annotations: Record<string, string> = {}, facts: Record<string, unknown> = {}): AgentView => ({
  id: `00000000-0000-0000-0000-${name.padStart(12, '0')}`,
  name,
  cluster_name: 'c',
  labels: [],
  annotations,
  facts,
});

/** The key as documented: sha256 of the sorted-key JSON of everything a render depends on. */
function documentedKey(input: RenderInput): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== undefined)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  const source = input.source.kind === 'yaml' ? { kind: 'yaml', checksum: input.source.checksum } : input.source;
  const whole = { rendererVersion: VERSION, source, values: input.values, capabilities: input.capabilities, patches: input.patches };
  return createHash('sha256')
    .update(JSON.stringify(sorted(whole)))
    .digest('hex');
}

const chart: RenderSource = {
  kind: 'helm',
  digest: 'sha256:' + 'a'.repeat(64),
  values: { group: '{{ agent.annotations.group }}', replicas: 2, nested: { z: 1, a: [{ y: 2, b: 'x' }] } },
  release: { name: 'shop', namespace: 'default' },
};

/**
 * Render plans (rendering/plan.ts): one input per agent, keyed by everything the render depends
 * on. Keys are stored with renders, so their formula must not drift: a new formula would render the
 * whole fleet again after an upgrade.
 */
describe('render plans', () => {
  it('keys each input exactly as the documented formula, for charts (values, capabilities) and plain YAML', () => {
    const facts = { kubernetes_version: 'v1.31.2', api_versions: ['v1', 'apps/v1', 'v1'] };
    const agents = [agentNamed('1', { group: 'a' }), agentNamed('2', { group: 'b' }, facts)];
    for (const plan of planRenders(chart, [], agents, VERSION)) {
      if (!('input' in plan)) throw new Error(plan.error);
      expect(plan.input.key).to.equal(documentedKey(plan.input));
    }
    const layer: OverrideLayer = {
      id: '00000000-0000-0000-0000-00000000000a',
      name: 'l',
      priority: 0,
      selector: {},
      patches: [{ target: { kind: 'ConfigMap', name: 'c' }, merge_patch: { data: { n: '{{ agent.name }}' } } }],
      layer_values: null,
    };
    const yaml: RenderSource = { kind: 'yaml', yaml: 'a: 1\n', checksum: 'c'.repeat(64) };
    const [plain] = planRenders(yaml, [layer], agents, VERSION);
    if (!plain || !('input' in plain)) throw new Error('no input');
    expect(plain.input.key).to.equal(documentedKey(plain.input));
  });

  it('gives agents with equal inputs one key, and agents whose clusters differ their own', () => {
    const modern = { kubernetes_version: 'v1.33.1', api_versions: ['v1', 'apps/v1'] };
    const plans = planRenders(
      chart,
      [],
      [
        agentNamed('1', { group: 'a' }),
        agentNamed('2', { group: 'a' }),
        agentNamed('3', { group: 'a' }, modern),
        agentNamed('4', { group: 'b' }),
      ],
      VERSION,
    );
    expect(distinctInputs(plans)).to.have.length(3);
    const [one, two] = plans;
    expect(one && 'input' in one && one.input.capabilities).to.deep.equal(DEFAULT_CAPABILITIES);
    expect(one && 'input' in one && two && 'input' in two && one.input.key === two.input.key).to.equal(true);
  });

  it('says which agent cannot be planned, and plans the others', () => {
    const plans = planRenders(chart, [], [agentNamed('1'), agentNamed('2', { group: 'a' })], VERSION);
    expect(plans[0]).to.have.property('error').that.includes('has no value for agent "1"');
    expect(plans[1]).to.have.property('input');
  });
});

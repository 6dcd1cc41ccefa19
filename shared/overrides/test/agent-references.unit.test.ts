import { expect } from 'chai';
import { refersToAgent, resolveAgentReferences, unreadableReference, UnresolvedReference, type AgentView } from '@brokkr/overrides';

const agent: AgentView = {
  id: '0b9f7c4e-3c1d-4c57-9a4f-8a7d2f2b6f10',
  name: 'edge-1',
  cluster_name: 'edge',
  labels: ['prod', 'eu'],
  annotations: { region: 'eu-west', sneaky: '{{ agent.id }}' },
  facts: { kubernetes_version: 'v1.33.1', api_versions: ['v1', 'apps/v1'] },
};

const resolve = (text: string) => resolveAgentReferences(text, agent);
const refusal = (text: string): string => {
  try {
    resolve(text);
  } catch (err) {
    expect(err).to.be.instanceOf(UnresolvedReference);
    return (err as Error).message;
  }
  throw new Error(`${text} resolved`);
};

/**
 * Agent references in values and override layers (rendering/agent-vars.ts): only the forms the
 * hub documents are read, strictly, from the agent's own fields; nothing is evaluated.
 */
describe('agent references', () => {
  it('reads the agent’s name, cluster, id, labels, annotations and facts', () => {
    expect(resolve('{{ agent.name }}/{{agent.cluster_name}}')).to.equal('edge-1/edge');
    expect(resolve('{{ agent.id }}')).to.equal(agent.id);
    expect(resolve('{{ agent.labels }}')).to.equal('prod,eu');
    expect(resolve('region={{ agent.annotations.region }}')).to.equal('region=eu-west');
    expect(resolve('{{ agent.facts.kubernetes_version }}')).to.equal('v1.33.1');
    expect(resolve('{{ agent.facts.api_versions }}')).to.equal('["v1","apps/v1"]');
  });

  it('uses the default only when the agent has no value, with its escapes', () => {
    expect(resolve('{{ agent.annotations.zone | default: "z-\\"a\\"" }}')).to.equal('z-"a"');
    expect(resolve('{{ agent.annotations.region | default: "us" }}')).to.equal('eu-west');
  });

  it('refuses a reference the agent has no value for, naming it and the agent', () => {
    expect(refusal('{{ agent.annotations.zone }}')).to.equal('{{ agent.annotations.zone }} has no value for agent "edge-1" and no default');
  });

  it('reads own keys only: __proto__, constructor and toString name nothing an agent has', () => {
    expect(refusal('{{ agent.annotations.__proto__ }}')).to.include('has no value');
    expect(refusal('{{ agent.facts.constructor }}')).to.include('has no value');
    expect(refusal('{{ agent.toString }}')).to.include('is not something an agent has');
    expect(refusal('{{ agent.annotations }}')).to.include('is not something an agent has');
  });

  it('evaluates nothing: other forms are refused, and a value that looks like a reference stays text', () => {
    expect(refusal('{{ agent.name | upper }}')).to.include('is not a reference this hub reads');
    expect(refusal('{{ agent.name }}{{ agent.')).to.include('is not a reference this hub reads');
    expect(resolve('{{ agent.annotations.sneaky }}')).to.equal('{{ agent.id }}');
  });

  it('resolves every string of a value and leaves the input untouched', () => {
    const values = { a: ['{{ agent.name }}', 3, true, null], b: { c: '{{ agent.cluster_name }}' } };
    const copy = structuredClone(values);
    expect(resolveAgentReferences(values, agent)).to.deep.equal({ a: ['edge-1', 3, true, null], b: { c: 'edge' } });
    expect(values).to.deep.equal(copy);
    expect(refersToAgent(values)).to.equal(true);
    expect(refersToAgent({ a: '{{ .Values.x }}' })).to.equal(false);
  });

  it('names, at write time, a reference no agent could ever resolve', () => {
    expect(unreadableReference({ x: ['{{ agent.annotation.region }}'] })).to.match(/^\{\{ agent\.annotation\.region \}\} is not something/);
    expect(unreadableReference({ x: '{{ agent.name | upper }}' })).to.include('is not a reference this hub reads');
    expect(unreadableReference({ x: '{{ agent.annotations.anything }}' })).to.equal(undefined);
  });
});

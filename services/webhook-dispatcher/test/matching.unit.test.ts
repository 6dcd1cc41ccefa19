import { expect } from 'chai';
import { anyPatternMatches, compileFilter, patternMatches } from '../src/subscriptions/matching.ts';

const A = '7b0c6f1e-8a53-4b5e-9a59-3c9c1a0b2d11';
const B = '11111111-2222-4333-8444-555555555555';

describe('subscription matching', () => {
  it('matches *, prefix.* and exact patterns', () => {
    expect(patternMatches('*', 'stack.created')).to.equal(true);
    expect(patternMatches('stack.*', 'stack.created')).to.equal(true);
    expect(patternMatches('stack.*', 'stacks.created')).to.equal(false);
    expect(patternMatches('stack.*', 'stack')).to.equal(false);
    expect(patternMatches('stack.created', 'stack.created')).to.equal(true);
    expect(patternMatches('stack.created', 'stack.deleted')).to.equal(false);
    expect(patternMatches('*.created', 'stack.created')).to.equal(false);
    expect(anyPatternMatches(['agent.*', 'stack.deleted'], 'stack.deleted')).to.equal(true);
    expect(anyPatternMatches([], 'stack.deleted')).to.equal(false);
  });

  it('admits everything without filters (NULL, blank, {}, only null fields)', () => {
    for (const f of [null, '', '  ', '{}', '{"agent_id":null}', '{"other":1}']) expect(compileFilter(f)({}), String(f)).to.equal(true);
  });

  it('requires every set field to equal data.<field> as a UUID', () => {
    const both = compileFilter(JSON.stringify({ agent_id: A, stack_id: B }));
    expect(both({ agent_id: A, stack_id: B })).to.equal(true);
    expect(both({ agent_id: A.toUpperCase(), stack_id: B })).to.equal(true);
    expect(both({ agent_id: A })).to.equal(false);
    expect(both({ agent_id: A, stack_id: null })).to.equal(false);
    expect(both({ agent_id: A, stack_id: A })).to.equal(false);
    expect(compileFilter(JSON.stringify({ stack_id: B }))({ stack_id: 'not-a-uuid' })).to.equal(false);
  });

  it('fails closed on a filter it cannot read', () => {
    for (const f of ['{oops', '[]', '"x"', '42', '{"agent_id":"not-a-uuid"}', '{"stack_id":7}']) {
      expect(compileFilter(f)({ agent_id: A, stack_id: B }), f).to.equal(false);
    }
  });
});

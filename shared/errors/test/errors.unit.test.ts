import { expect } from 'chai';
import { BrokkrError, ConfigError, DependencyError, coerceError } from '../src/index.ts';

describe('errors', () => {
  it('names each error after its class and keeps the cause', () => {
    const cause = new Error('socket closed');
    const err = new DependencyError('postgres unreachable', { cause });
    expect(err.name).to.equal('DependencyError');
    expect(err).to.be.instanceOf(BrokkrError);
    expect(err.cause).to.equal(cause);
  });

  it('ConfigError carries every issue', () => {
    const err = new ConfigError('invalid configuration', ['A: required', 'B: must be a number']);
    expect(err.issues).to.deep.equal(['A: required', 'B: must be a number']);
  });

  it('coerceError turns anything thrown into an Error', () => {
    const original = new Error('x');
    expect(coerceError(original)).to.equal(original);
    expect(coerceError('boom').message).to.equal('boom');
    expect(coerceError({ code: 7 }).message).to.equal('{"code":7}');
  });
});

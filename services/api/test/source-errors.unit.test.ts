import { expect } from 'chai';
import { SOURCE_ERROR_STATUS } from '@brokkr/sources';
import { sourceErrors } from '../src/resources/deployment-objects/source-input.ts';

describe('source errors on the wire', () => {
  it('answers every reason a source cannot be used with its code and the status @brokkr/sources gives it', () => {
    const wire = Object.fromEntries(Object.entries(sourceErrors).map(([code, kind]) => [code, [kind.code, kind.status]]));
    const expected = Object.fromEntries(Object.entries(SOURCE_ERROR_STATUS).map(([code, status]) => [code, [code, status]]));
    expect(wire).to.deep.equal(expected);
  });
});

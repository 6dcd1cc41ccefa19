import { expect } from 'chai';
import { headerValueProblem, isValidHeaderValue, MAX_HEADER_VALUE_LENGTH } from '../src/index.ts';

describe('auth header values', () => {
  it('accepts printable ASCII and tab', () => {
    for (const v of ['Bearer abc.def-ghi_jkl~', 'Basic dXNlcjpwYXNz', 'Token\tx', '', 'x'.repeat(MAX_HEADER_VALUE_LENGTH)]) {
      expect(isValidHeaderValue(v), JSON.stringify(v)).to.equal(true);
    }
  });

  it('refuses line breaks, NUL, other controls, bidi overrides, emoji and Latin-1 text', () => {
    for (const v of ['Bearer a\nX-Injected: 1', 'Bearer a\r\n', 'a\u0000b', 'a\u007fb', 'Bearer \u202Eabc', 'Bearer 😀', 'Bearer café']) {
      expect(headerValueProblem(v), JSON.stringify(v)).to.match(/printable ASCII/);
    }
    expect(headerValueProblem('x'.repeat(MAX_HEADER_VALUE_LENGTH + 1))).to.match(/at most/);
  });
});

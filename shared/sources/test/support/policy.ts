import { expect } from 'chai';
import { SourceError, type SourcePolicy, type SourceErrorCode } from '../../src/index.ts';

/** The tests' servers listen on 127.0.0.1, so most tests allow private networks explicitly. */
export function localPolicy(overrides: Partial<SourcePolicy> = {}): SourcePolicy {
  return { allowPrivateNetworks: true, allowedHosts: [], maxBytes: 10 * 1024 * 1024, timeoutMs: 15_000, ...overrides };
}

/** What production has by default: no private address, any public host. */
export function publicOnlyPolicy(overrides: Partial<SourcePolicy> = {}): SourcePolicy {
  return localPolicy({ allowPrivateNetworks: false, ...overrides });
}

/** Awaits the promise and returns the SourceError it rejected with, failing if it resolved or threw something else. */
export async function sourceError(promise: Promise<unknown>, code: SourceErrorCode): Promise<SourceError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, 'the fetch was expected to fail').to.be.instanceOf(SourceError);
  const error = caught as SourceError;
  expect(error.code, error.message).to.equal(code);
  return error;
}

import { expect } from 'chai';
import { backoffDelay, isRetryable, KubeApiError, withRetries } from '../src/index.ts';

describe('agent retries', () => {
  it('retries throttling, server errors and lost connections, but not client errors', () => {
    for (const status of [0, 429, 500, 503, 504])
      expect(isRetryable(new KubeApiError(status, undefined, 'x')), String(status)).to.equal(true);
    for (const status of [400, 403, 404, 409, 422])
      expect(isRetryable(new KubeApiError(status, undefined, 'x')), String(status)).to.equal(false);
    expect(
      isRetryable(new KubeApiError(500, 'InternalError', 'PATCH x → 500: failed to create typed patch object (a; /v1, Kind=ConfigMap)')),
    ).to.equal(false);
    expect(isRetryable(new Error('not a Kubernetes error'))).to.equal(false);
  });

  it('grows the backoff exponentially with jitter, within the cap', () => {
    expect(backoffDelay(1, 100, 10_000, () => 0)).to.equal(50);
    expect(backoffDelay(1, 100, 10_000, () => 1)).to.equal(100);
    expect(backoffDelay(4, 100, 10_000, () => 1)).to.equal(800);
    expect(backoffDelay(30, 100, 10_000, () => 1)).to.equal(10_000);
  });

  it('gives up after the attempts, and at once on a permanent error', async () => {
    let calls = 0;
    const transient = () => {
      calls++;
      return Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'busy'));
    };
    await withRetries(transient, { attempts: 3, baseMs: 1, maxMs: 2 }).catch(() => undefined);
    expect(calls).to.equal(3);
    calls = 0;
    const permanent = () => {
      calls++;
      return Promise.reject(new KubeApiError(422, 'Invalid', 'bad'));
    };
    await withRetries(permanent, { attempts: 3, baseMs: 1, maxMs: 2 }).catch(() => undefined);
    expect(calls).to.equal(1);
  });

  it('returns the first success', async () => {
    let calls = 0;
    const flaky = () => (++calls < 3 ? Promise.reject(new KubeApiError(429, 'TooManyRequests', 'slow down')) : Promise.resolve('ok'));
    expect(await withRetries(flaky, { attempts: 5, baseMs: 1, maxMs: 2 })).to.equal('ok');
    expect(calls).to.equal(3);
  });
});

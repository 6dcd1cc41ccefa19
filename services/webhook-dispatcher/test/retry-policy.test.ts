import { expect } from 'chai';
import { backoffSeconds, decide, isRetryableStatus, parseRetryAfter } from '../src/delivery/retry-policy.ts';

const settings = { maxBackoffSeconds: 3600, random: () => 0.5 };
const response = (status: number, extra: { retryAfterSeconds?: number; bodyPrefix?: string } = {}) =>
  ({ kind: 'response', status, bodyPrefix: extra.bodyPrefix ?? '', retryAfterSeconds: extra.retryAfterSeconds }) as const;

describe('delivery retry policy (contract §5.5)', () => {
  it('classifies statuses like Brokkr', () => {
    for (const s of [408, 425, 429, 500, 502, 503, 301, 302, 100, 600]) expect(isRetryableStatus(s), String(s)).to.equal(true);
    for (const s of [400, 401, 403, 404, 410, 422]) expect(isRetryableStatus(s), String(s)).to.equal(false);
  });

  it('succeeds on 2xx, retries 5xx and transport errors, gives up on other 4xx', () => {
    expect(decide(response(204), 0, 5, settings)).to.deep.equal({ kind: 'success' });
    expect(decide(response(503, { bodyPrefix: 'busy' }), 0, 5, settings)).to.deep.equal({ kind: 'retry', delaySeconds: 2, error: 'HTTP 503 Service Unavailable: busy' });
    expect(decide({ kind: 'transport', message: 'ECONNREFUSED', retryable: true }, 1, 5, settings)).to.deep.equal({
      kind: 'retry',
      delaySeconds: 4,
      error: 'Request failed: ECONNREFUSED',
    });
    expect(decide(response(404), 0, 5, settings)).to.deep.include({ kind: 'dead' });
    expect(decide({ kind: 'transport', message: 'blocked', retryable: false }, 0, 5, settings).kind).to.equal('dead');
  });

  it('treats max_retries as the total number of attempts (0 and 1 both mean one attempt)', () => {
    expect(decide(response(500), 3, 5, settings).kind).to.equal('retry');
    expect(decide(response(500), 4, 5, settings).kind).to.equal('dead');
    expect(decide(response(500), 0, 1, settings).kind).to.equal('dead');
    expect(decide(response(500), 0, 0, settings).kind).to.equal('dead');
  });

  it('truncates the body in the error to 200 characters', () => {
    const d = decide(response(500, { bodyPrefix: 'x'.repeat(1000) }), 0, 5, settings);
    expect(d.kind === 'retry' && d.error).to.equal(`HTTP 500 Internal Server Error: ${'x'.repeat(200)}`);
  });

  it('backs off exponentially with ±25 % jitter, capped, and never sooner than Retry-After', () => {
    expect(backoffSeconds(3, { maxBackoffSeconds: 3600, random: () => 0 })).to.equal(6);
    expect(backoffSeconds(3, { maxBackoffSeconds: 3600, random: () => 1 })).to.equal(10);
    expect(backoffSeconds(30, { maxBackoffSeconds: 60, random: () => 0.5 })).to.equal(60);
    expect(backoffSeconds(1, settings, 120)).to.equal(120);
    expect(decide(response(429, { retryAfterSeconds: 90 }), 0, 5, settings)).to.deep.include({ kind: 'retry', delaySeconds: 90 });
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).to.equal(120);
    expect(parseRetryAfter(['7'], now)).to.equal(7);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).to.equal(60);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(undefined);
    expect(parseRetryAfter(undefined, now)).to.equal(undefined);
    expect(parseRetryAfter('99999999', now)).to.equal(86400);
  });
});

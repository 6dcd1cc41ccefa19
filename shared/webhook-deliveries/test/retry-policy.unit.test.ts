import { expect } from 'chai';
import {
  afterFailure,
  agentLeaseSeconds,
  backoffSeconds,
  decide,
  dispatcherLeaseSeconds,
  isRetryableReport,
  isRetryableStatus,
  parseRetryAfter,
} from '../src/index.ts';

const settings = { maxBackoffSeconds: 3600, random: () => 0.5 };
const response = (status: number, extra: { retryAfterSeconds?: number; bodyPrefix?: string } = {}) =>
  ({ kind: 'response', status, bodyPrefix: extra.bodyPrefix ?? '', retryAfterSeconds: extra.retryAfterSeconds }) as const;

describe('the one delivery retry policy', () => {
  it('classifies statuses like Brokkr', () => {
    for (const s of [408, 425, 429, 500, 502, 503, 301, 302, 100, 600]) expect(isRetryableStatus(s), String(s)).to.equal(true);
    for (const s of [400, 401, 403, 404, 410, 422]) expect(isRetryableStatus(s), String(s)).to.equal(false);
  });

  it('succeeds on 2xx, retries 5xx and transport errors, gives up on other 4xx', () => {
    expect(decide(response(204), 0, 5, settings)).to.deep.equal({ kind: 'success' });
    expect(decide(response(503, { bodyPrefix: 'busy' }), 0, 5, settings)).to.deep.equal({
      kind: 'retry',
      delaySeconds: 2,
      error: 'HTTP 503 Service Unavailable: busy',
    });
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

  it('is the same policy for an agent report: no status code is retryable, no Retry-After', () => {
    expect(isRetryableReport(undefined)).to.equal(true);
    expect(isRetryableReport(503)).to.equal(true);
    expect(isRetryableReport(429)).to.equal(true);
    expect(isRetryableReport(404)).to.equal(false);
    // What the dispatcher decides for a 503 after the 2nd attempt, the agent path decides too.
    const hub = decide(response(503), 1, 5, settings);
    const agent = afterFailure({ retryable: isRetryableReport(503), attemptsBefore: 1, maxRetries: 5 }, settings);
    expect(agent).to.deep.equal({ kind: 'retry', delaySeconds: 4 });
    expect(hub).to.deep.include(agent);
    expect(afterFailure({ retryable: true, attemptsBefore: 4, maxRetries: 5 }, settings)).to.deep.equal({ kind: 'dead' });
    expect(afterFailure({ retryable: false, attemptsBefore: 0, maxRetries: 5 }, settings)).to.deep.equal({ kind: 'dead' });
  });

  it('jitters within ±25 % and caps at maxBackoffSeconds for every attempt number', () => {
    for (let attempt = 1; attempt <= 40; attempt++) {
      const base = Math.min(600, 2 ** Math.min(attempt, 30));
      for (const r of [0, 0.3, 0.999]) {
        const delay = backoffSeconds(attempt, { maxBackoffSeconds: 600, random: () => r });
        expect(delay, `attempt ${attempt}`).to.be.within(base * 0.75, base * 1.25);
      }
    }
  });
});

describe('lease lengths', () => {
  it('dispatcher: the configured floor, or the timeout plus 10 s to record the outcome', () => {
    expect(dispatcherLeaseSeconds(60, 30)).to.equal(60);
    expect(dispatcherLeaseSeconds(60, 300)).to.equal(310);
    expect(dispatcherLeaseSeconds(5, 1)).to.equal(11);
  });

  it('agent: 60 s to start the POST, its timeout, 30 s to report', () => {
    expect(agentLeaseSeconds(30)).to.equal(120);
    expect(agentLeaseSeconds(1)).to.equal(91);
    expect(agentLeaseSeconds(300)).to.equal(390);
  });
});

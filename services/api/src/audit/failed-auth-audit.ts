import type { Logger } from '@brokkr/logger';
import type { Counter } from '@brokkr/telemetry';
import type { Auditor } from './auditor.ts';
import { TokenBucket } from '../auth/token-bucket.ts';

export interface FailedAuth {
  /** Request path without the `/api/v1` prefix (Brokkr's format). */
  path: string;
  ipAddress: string | null;
  userAgent: string | null;
}

export interface FailedAuthAuditOptions {
  audit: Auditor;
  logger: Logger;
  suppressed: Counter;
  /** Entries per second per replica; a flood beyond that is counted, not written. */
  ratePerSecond?: number;
  burst?: number;
  /** How often a summary of suppressed entries is logged while a flood lasts. */
  summaryIntervalMs?: number;
}

/**
 * Brokkr audits every failed authentication. Unbounded, a flood of bad PAKs would become a flood
 * of audit writes, so each replica writes at most `ratePerSecond` of them and counts the rest
 * (`brokkr_auth_failed_audit_suppressed_total` plus one log line per interval).
 */
export function createFailedAuthAudit(options: FailedAuthAuditOptions): { record(f: FailedAuth): void; flush(): void } {
  const bucket = new TokenBucket(options.ratePerSecond ?? 10, options.burst ?? 20);
  const intervalMs = options.summaryIntervalMs ?? 10_000;
  let suppressedSinceLog = 0;
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    if (suppressedSinceLog === 0) return;
    options.logger.warn({ suppressed: suppressedSinceLog }, 'auth.failed audit entries suppressed by the rate limit');
    suppressedSinceLog = 0;
  }

  return {
    record(failure) {
      if (!bucket.tryTake()) {
        options.suppressed.inc();
        suppressedSinceLog += 1;
        timer ??= setTimeout(flush, intervalMs).unref();
        return;
      }
      void options.audit({
        actor: 'system',
        action: 'auth.failed',
        resourceType: 'system',
        details: { reason: 'invalid_pak', path: failure.path },
        ipAddress: failure.ipAddress,
        userAgent: failure.userAgent,
      });
    },
    flush,
  };
}

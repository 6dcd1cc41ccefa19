import { publishJson, SUBJECTS, type JetStreamClient } from '@brokkr/bus';
import type { AuditRecord } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';

const AUDIT_PUBLISH_TIMEOUT_MS = 2000;

/**
 * Audit entries a task wrote with its change are already in audit_logs; the stream copy is the
 * feed for subscribers (same id: the audit-writer's insert absorbs it), so a failed publish is
 * only logged.
 */
export async function publishAuditFeed(js: JetStreamClient, records: readonly AuditRecord[], logger: Logger): Promise<void> {
  const results = await Promise.allSettled(
    records.map((r) => publishJson(js, SUBJECTS.audit(r.action), r, { msgID: r.id, timeoutMs: AUDIT_PUBLISH_TIMEOUT_MS })),
  );
  const failed = results.filter((r) => r.status === 'rejected').length;
  if (failed > 0) logger.warn({ failed }, 'audit entries not published to the stream (they are in audit_logs)');
}

import { publishJson, SUBJECTS, type JetStreamClient } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Counter } from '@brokkr/telemetry';
import { insertAuditLog } from '../sql/insert-audit-log.ts';
import { buildAuditRecord, type AuditInput, type AuditRecord } from './audit-entry.ts';

/** Records an audited action. Never throws: an audit problem must not fail the request. */
export type Auditor = (input: AuditInput) => Promise<AuditRecord>;

const PUBLISH_TIMEOUT_MS = 2000;

export interface AuditorDeps {
  js: JetStreamClient;
  db: Queryable;
  logger: Logger;
  fallbackWrites: Counter<'reason'>;
}

/**
 * Publishes the entry to BROKKR_AUDIT and waits for the stream's acknowledgement (the entry is
 * then durable in JetStream and the audit-writer will insert it). If NATS refuses or times out,
 * the entry goes straight into audit_logs instead, so no entry is dropped.
 */
export function createAuditor(deps: AuditorDeps): Auditor {
  const logger = deps.logger.child({ component: 'audit' });
  return async (input) => {
    const record = buildAuditRecord(input);
    try {
      await publishJson(deps.js, SUBJECTS.audit(record.action), record, { msgID: record.id, timeoutMs: PUBLISH_TIMEOUT_MS });
      return record;
    } catch (err) {
      logger.warn({ err, action: record.action, id: record.id }, 'audit publish failed; writing to the database directly');
      deps.fallbackWrites.inc({ reason: 'publish_failed' });
    }
    try {
      await insertAuditLog(deps.db, record);
    } catch (err) {
      logger.error({ err, record }, 'audit entry could not be stored');
    }
    return record;
  };
}

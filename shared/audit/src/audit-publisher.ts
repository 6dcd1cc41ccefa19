import { publishJson, SUBJECTS, type JetStreamClient } from '@brokkr/bus';
import type { AuditRecord } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { insertAuditRecords } from './insert-audit-records.ts';

/** Records one entry. Never throws: an audit problem must not fail the action being audited. */
export type PublishAudit = (record: AuditRecord) => Promise<void>;

export interface AuditPublisherDeps {
  js: JetStreamClient;
  db: Queryable;
  logger: Logger;
  /** Counts entries that went to the database because NATS did not take them. */
  onFallback?: () => void;
}

const PUBLISH_TIMEOUT_MS = 2000;

/**
 * Publish, else insert. The entry is published to BROKKR_AUDIT with its id as `Nats-Msg-Id` and
 * the stream's acknowledgement awaited (it is then durable, and the audit-writer will insert it).
 * If NATS refuses or times out, the entry goes straight into audit_logs with the same id, so no
 * entry is dropped and a late copy through the stream is absorbed by the insert.
 */
export function createAuditPublisher(deps: AuditPublisherDeps): PublishAudit {
  const logger = deps.logger.child({ component: 'audit' });
  return async (record) => {
    try {
      await publishJson(deps.js, SUBJECTS.audit(record.action), record, { msgID: record.id, timeoutMs: PUBLISH_TIMEOUT_MS });
      return;
    } catch (err) {
      logger.warn({ err, action: record.action, id: record.id }, 'audit publish failed; writing to the database directly');
      deps.onFallback?.();
    }
    try {
      await insertAuditRecords(deps.db, [record]);
    } catch (err) {
      logger.error({ err, record }, 'audit entry could not be stored');
    }
  };
}

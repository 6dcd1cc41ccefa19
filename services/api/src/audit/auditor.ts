import { createAuditPublisher } from '@brokkr/audit';
import type { JetStreamClient } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Counter } from '@brokkr/telemetry';
import { buildAuditRecord, type AuditInput, type AuditRecord } from './audit-entry.ts';

/** Records an audited action. Never throws: an audit problem must not fail the request. */
export type Auditor = (input: AuditInput) => Promise<AuditRecord>;

export interface AuditorDeps {
  js: JetStreamClient;
  db: Queryable;
  logger: Logger;
  fallbackWrites: Counter<'reason'>;
}

/** Builds the entry from the caller's identity and records it (publish, else insert: @brokkr/audit). */
export function createAuditor(deps: AuditorDeps): Auditor {
  const publish = createAuditPublisher({
    js: deps.js,
    db: deps.db,
    logger: deps.logger,
    onFallback: () => deps.fallbackWrites.inc({ reason: 'publish_failed' }),
  });
  return async (input) => {
    const record = buildAuditRecord(input);
    await publish(record);
    return record;
  };
}

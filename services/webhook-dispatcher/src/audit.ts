import { randomUUID } from 'node:crypto';
import { publishJson, SUBJECTS, type JetStreamClient } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Counter } from '@brokkr/telemetry';

export interface DeliveryFailedAudit {
  subscriptionId: string;
  deliveryId: string;
  eventId: string;
  eventType: string;
  attempts: number;
  lastError: string;
}

export type RecordDeliveryFailed = (entry: DeliveryFailedAudit) => Promise<void>;

const PUBLISH_TIMEOUT_MS = 2000;

/**
 * `webhook.delivery_failed` (actor system, resource the subscription) the way the api audits:
 * published to BROKKR_AUDIT for the audit-writer, with the entry id as Nats-Msg-Id and insert
 * key; when NATS does not acknowledge it, written to audit_logs directly so it is never dropped.
 */
export function createDeliveryFailedAuditor(deps: { js: JetStreamClient; db: Queryable; logger: Logger; fallbacks: Counter<string> }): RecordDeliveryFailed {
  const logger = deps.logger.child({ component: 'audit' });
  return async (entry) => {
    const record = {
      id: randomUUID(),
      timestamp: new Date().toISOString(),
      actor_type: 'system' as const,
      actor_id: null,
      action: 'webhook.delivery_failed',
      resource_type: 'webhook_subscription',
      resource_id: entry.subscriptionId,
      details: {
        delivery_id: entry.deliveryId,
        event_id: entry.eventId,
        event_type: entry.eventType,
        attempts: entry.attempts,
        last_error: entry.lastError,
      },
      ip_address: null,
      user_agent: null,
    };
    try {
      await publishJson(deps.js, SUBJECTS.audit(record.action), record, { msgID: record.id, timeoutMs: PUBLISH_TIMEOUT_MS });
      return;
    } catch (err) {
      logger.warn({ err, id: record.id }, 'audit publish failed; writing to the database directly');
      deps.fallbacks.inc();
    }
    await deps.db
      .query(
        `INSERT INTO audit_logs (id, "timestamp", actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
        [record.id, record.timestamp, record.actor_type, record.actor_id, record.action, record.resource_type, record.resource_id,
          record.details, record.ip_address, record.user_agent],
      )
      .catch((err: unknown) => logger.error({ err, record }, 'audit entry could not be stored'));
  };
}

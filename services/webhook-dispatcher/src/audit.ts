import { randomUUID } from 'node:crypto';
import { createAuditPublisher } from '@brokkr/audit';
import type { JetStreamClient } from '@brokkr/bus';
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

/** `webhook.delivery_failed` (actor system, resource the subscription), recorded the way every service audits. */
export function createDeliveryFailedAuditor(deps: {
  js: JetStreamClient;
  db: Queryable;
  logger: Logger;
  fallbacks: Counter<string>;
}): RecordDeliveryFailed {
  const publish = createAuditPublisher({ js: deps.js, db: deps.db, logger: deps.logger, onFallback: () => deps.fallbacks.inc() });
  return (entry) =>
    publish({
      id: randomUUID(),
      timestamp: new Date().toISOString(),
      actor_type: 'system',
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
    });
}

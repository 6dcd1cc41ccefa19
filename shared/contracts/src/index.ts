/**
 * @brokkr/contracts: every wire shape that crosses a process boundary, once, as a zod schema and
 * its type — the NATS messages (events, audit entries, core notices), the outbox row, the v1 API
 * shapes the agent uses and the ones the CLI reads. A service or client that sends or receives
 * one of these imports it here and never declares its own copy.
 */
export {
  EVENT_TYPES,
  buildEvent,
  eventEnvelopeSchema,
  orderedEnvelope,
  parseEventEnvelope,
  serializeEventEnvelope,
  type DomainEvent,
  type EventEnvelope,
  type EventType,
} from './events.ts';
export { ACTOR_TYPES, AUDIT_RESOURCE_TYPES, auditRecordSchema, type ActorType, type AuditRecord, type AuditResourceType } from './audit.ts';
export { outboxRowSchema, type OutboxRow } from './outbox.ts';
export {
  agentNoticeSchema,
  configReloadNoticeSchema,
  deliveriesDueNoticeSchema,
  pakInvalidationSchema,
  webhookInvalidationSchema,
  type AgentNotice,
  type ConfigReloadNotice,
  type DeliveriesDueNotice,
  type PakInvalidation,
  type WebhookInvalidation,
} from './notices.ts';
export * from './agent-api.ts';
export { int32, softDeletableRow, timestamp, uuid } from './wire.ts';
export * from './work-orders.ts';
export * from './telemetry.ts';
export * from './diagnostics.ts';
export * from './rollouts.ts';
export * from './previews.ts';
export * from './templates.ts';
export * from './agent-channel.ts';
export * from './stacks.ts';
export * from './generators.ts';
export * from './health.ts';
export * from './labels.ts';
export * from './paks.ts';
export * from './grants.ts';
export * from './drift.ts';
export * from './maintenance-windows.ts';
export * from './signatures.ts';
export * from './overrides.ts';
export * from './dependencies.ts';

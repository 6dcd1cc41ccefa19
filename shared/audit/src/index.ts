export { createAuditPublisher, type AuditPublisherDeps, type PublishAudit } from './audit-publisher.ts';
export { insertAuditRecords } from './insert-audit-records.ts';

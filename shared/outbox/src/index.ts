export { outboxRow, statementEvent, statementOutboxRow, type OutboxRow, type StatementEvent } from './envelope.ts';
export { eventTypeColumnsSql, insertEnvelopesSql, isoTimestampSql, outboxInsertSql, type EnvelopeSql } from './sql/insert-envelopes.ts';
export { insertOutboxRows } from './sql/insert-rows.ts';
export { markOutboxPublished, recordPublishAttempt } from './sql/mark-published.ts';

import { Counter, type Registry } from 'prom-client';

export interface AuditWriterMetrics {
  written: Counter;
  duplicates: Counter;
  malformed: Counter;
  batchFailures: Counter;
}

export function auditWriterMetrics(registry: Registry): AuditWriterMetrics {
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [registry] });
  return {
    written: counter('brokkr_audit_entries_written_total', 'Audit entries inserted'),
    duplicates: counter('brokkr_audit_entries_duplicate_total', 'Redelivered audit entries that were already stored'),
    malformed: counter('brokkr_audit_entries_malformed_total', 'Messages on the audit stream that were not audit entries'),
    batchFailures: counter('brokkr_audit_batch_failures_total', 'Batches that failed to commit and were redelivered'),
  };
}

import type { DriftReportBatch } from '@brokkr/contracts';
import type { TxScope } from '../../events/transact.ts';
import { recordReport, resolveUnseen, type ReportInput, type ReportOutcome } from './sql/record-report.ts';

export interface ReportCounts {
  accepted: number;
  detected: number;
  corrected: number;
  resolved: number;
  /** Episodes reported open whose record the hub already closed (an operator accepted it): the agent ends them. */
  closed: string[];
}

/** The event every outcome carries: the record and what it is about, never a value. */
function eventData(o: ReportOutcome): Record<string, unknown> {
  return {
    record_id: o.id,
    stack_id: o.stack_id,
    agent_id: o.agent_id,
    deployment_object_id: o.deployment_object_id,
    object: { api_version: o.api_version, kind: o.kind, namespace: o.namespace, name: o.name },
    missing: o.missing,
    paths: o.paths,
    managers: [...new Set(o.managers)],
    state: o.state,
  };
}

/**
 * Stores an agent's batch in order, inside the caller's transaction, and emits `drift.detected`
 * for each episode new to the hub, `drift.corrected` and `drift.resolved` for each record closed
 * so. A repeated batch matches nothing new and emits nothing.
 */
export async function storeReports(
  tx: TxScope,
  agentId: string,
  batch: { reports: ReportInput[]; sweep?: DriftReportBatch['sweep'] },
): Promise<ReportCounts> {
  const counts: ReportCounts = { accepted: batch.reports.length, detected: 0, corrected: 0, resolved: 0, closed: [] };
  for (const report of batch.reports) {
    const outcome = await recordReport(tx.client, agentId, report);
    if (!outcome) {
      // No open record of the object, and the episode's id taken: its record was closed meanwhile.
      if (report.state === 'open') counts.closed.push(report.id);
      continue;
    }
    if (outcome.inserted) {
      counts.detected++;
      tx.emit('drift.detected', eventData({ ...outcome, state: 'open' }));
    }
    if (outcome.state === 'corrected') {
      counts.corrected++;
      tx.emit('drift.corrected', eventData(outcome));
    }
    if (outcome.state === 'resolved') {
      counts.resolved++;
      tx.emit('drift.resolved', eventData(outcome));
    }
  }
  if (batch.sweep) {
    for (const outcome of await resolveUnseen(tx.client, agentId, batch.sweep.stack_ids, batch.sweep.started_at)) {
      counts.resolved++;
      tx.emit('drift.resolved', eventData(outcome));
    }
  }
  return counts;
}

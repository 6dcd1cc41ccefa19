import type { Queryable } from '@brokkr/db';
import type { AgentWakeups } from '../targeting/wakeups.ts';
import type { DiagnosticRequestRow } from './sql/diagnostic-row.ts';
import { listPendingDiagnostics } from './sql/queries.ts';

export interface PendingDiagnosticsQuery {
  agentId: string;
  /** 0 = answer at once (Brokkr's behaviour). */
  waitSeconds: number;
  /** Aborted when the client goes away: stop, answer nothing. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: stop waiting and answer now. */
  hurry?: AbortSignal;
}

/**
 * GET /agents/{id}/diagnostics/pending with `wait` (our extension, as for work orders): a
 * non-empty list is answered at once; an empty one is held until a `brokkr.notify.agent.<id>`
 * hint finds a request (creating one publishes it), or the wait ends — then the list is read once
 * more, since hints are lossy.
 */
export async function answerPendingDiagnostics(
  db: Queryable,
  wakeups: AgentWakeups | undefined,
  query: PendingDiagnosticsQuery,
): Promise<DiagnosticRequestRow[] | 'aborted'> {
  // Watch before the first read: a request created between the read and the wait still wakes us.
  const watch = query.waitSeconds > 0 ? wakeups?.watch(query.agentId) : undefined;
  try {
    const rows = await listPendingDiagnostics(db, query.agentId);
    if (rows.length > 0 || !watch) return rows;
    const deadline = Date.now() + query.waitSeconds * 1000;
    const stop = query.hurry ? AbortSignal.any([query.signal, query.hurry]) : query.signal;
    for (;;) {
      const outcome = await watch.next(deadline, stop);
      if (query.signal.aborted) return 'aborted';
      const now = await listPendingDiagnostics(db, query.agentId);
      // A hint for something else (target state, a work order): keep waiting.
      if (now.length > 0 || outcome !== 'woken') return now;
    }
  } finally {
    watch?.close();
  }
}

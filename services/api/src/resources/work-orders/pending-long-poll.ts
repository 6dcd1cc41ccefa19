import type { Queryable } from '@brokkr/db';
import type { AgentWakeups } from '../targeting/wakeups.ts';
import { listPendingForAgent } from './sql/queries.ts';
import type { WorkOrderRow } from './sql/work-order-row.ts';

/**
 * GET /agents/{id}/work-orders/pending with `wait` (our extension, like target-state's): a
 * non-empty list is answered at once; an empty one is held until a `brokkr.notify.agent.<id>`
 * hint finds orders, or the wait ends (then the list is read once more: hints are lossy).
 */
export interface PendingQuery {
  agentId: string;
  workType: string | undefined;
  /** 0 = answer at once. */
  waitSeconds: number;
  /** Aborted when the client goes away: stop, answer nothing. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: stop waiting and answer now. */
  hurry?: AbortSignal;
}

export async function answerPending(
  db: Queryable,
  wakeups: AgentWakeups | undefined,
  query: PendingQuery,
): Promise<WorkOrderRow[] | 'aborted'> {
  // Watch before the first read: an order created between the read and the wait still wakes us.
  const watch = query.waitSeconds > 0 ? wakeups?.watch(query.agentId) : undefined;
  try {
    const rows = await listPendingForAgent(db, query.agentId, query.workType);
    if (rows.length > 0 || !watch) return rows;
    const deadline = Date.now() + query.waitSeconds * 1000;
    const stop = query.hurry ? AbortSignal.any([query.signal, query.hurry]) : query.signal;
    for (;;) {
      const outcome = await watch.next(deadline, stop);
      if (query.signal.aborted) return 'aborted';
      const now = await listPendingForAgent(db, query.agentId, query.workType);
      // A hint for something else (a target-state change, an order another agent took): keep waiting.
      if (now.length > 0 || outcome !== 'woken') return now;
    }
  } finally {
    watch?.close();
  }
}

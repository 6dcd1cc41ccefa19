import type { Queryable } from '@brokkr/db';
import type { AgentWakeups } from '../targeting/wakeups.ts';
import { listPendingPreviews } from './sql/queries.ts';
import type { PendingPreviewRow } from './sql/preview-row.ts';

export interface PendingPreviewQuery {
  agentId: string;
  /** 0 = answer at once. */
  waitSeconds: number;
  /** Aborted when the client goes away: stop, answer nothing. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: stop waiting and answer now. */
  hurry?: AbortSignal;
}

/**
 * GET /agents/{id}/previews/pending with `wait`: a non-empty list is answered at once; an empty
 * one is held until a `brokkr.notify.agent.<id>` hint finds a preview (creating one notifies
 * its agents), or the wait ends (then the list is read once more: hints are lossy).
 */
export async function answerPendingPreviews(
  db: Queryable,
  wakeups: AgentWakeups | undefined,
  query: PendingPreviewQuery,
): Promise<PendingPreviewRow[] | 'aborted'> {
  // Watch before the first read: a preview created between the read and the wait still wakes us.
  const watch = query.waitSeconds > 0 ? wakeups?.watch(query.agentId) : undefined;
  try {
    const rows = await listPendingPreviews(db, query.agentId);
    if (rows.length > 0 || !watch) return rows;
    const deadline = Date.now() + query.waitSeconds * 1000;
    const stop = query.hurry ? AbortSignal.any([query.signal, query.hurry]) : query.signal;
    for (;;) {
      const outcome = await watch.next(deadline, stop);
      if (query.signal.aborted) return 'aborted';
      const now = await listPendingPreviews(db, query.agentId);
      // A hint for something else (a target-state change, a work order): keep waiting.
      if (now.length > 0 || outcome !== 'woken') return now;
    }
  } finally {
    watch?.close();
  }
}

import type { Response } from 'express';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import { longPollDeadline, type Waiters } from '../delivery/waiters.ts';
import { clientGone } from './client-gone.ts';
import { json, type Reply } from './route.ts';

export interface PendingWait {
  agentId: string;
  /** 0 = answer at once. */
  waitSeconds: number;
  /** Aborted when the client goes away: stop, answer nothing. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: stop waiting and answer now. */
  hurry?: AbortSignal;
}

/**
 * An agent's pending list (work orders, diagnostics, previews) with `wait` (our extension, like
 * target-state's): a non-empty list is answered at once; an empty one is held until a
 * `brokkr.notify.agent.<id>` hint finds something, or the wait ends (then the list is read once
 * more: hints are lossy).
 */
export async function answerPendingList<T>(
  waiters: Waiters | undefined,
  wait: PendingWait,
  read: () => Promise<T[]>,
): Promise<T[] | 'aborted'> {
  // Watch before the first read: work created between the read and the wait still wakes us.
  const watch = wait.waitSeconds > 0 ? waiters?.watch(wait.agentId) : undefined;
  try {
    const rows = await read();
    if (rows.length > 0 || !watch) return rows;
    const deadline = longPollDeadline(wait.waitSeconds);
    const stop = wait.hurry ? AbortSignal.any([wait.signal, wait.hurry]) : wait.signal;
    for (;;) {
      const outcome = await watch.next(deadline, stop);
      if (wait.signal.aborted) return 'aborted';
      const now = await read();
      // A hint for something else (a target-state change, work another agent took): keep waiting.
      if (now.length > 0 || outcome !== 'woken') return now;
    }
  } finally {
    watch?.close();
  }
}

/**
 * The handler's answer: 200 with the list, or 499 written directly when the client left. A request
 * with a wait counts against its PAK's long-polls until answered (429 `too_many_streams` beyond
 * the limit: routes list `tooManyStreams`).
 */
export async function replyPendingList<T>(
  ctx: ApiContext,
  res: Response,
  request: { agentId: string; wait: number | string | undefined; identity: Identity },
  read: () => Promise<T[]>,
): Promise<Reply | undefined> {
  const waitSeconds = Math.min(Number(request.wait ?? 0), ctx.settings.longPollMaxSeconds);
  const release = waitSeconds > 0 ? ctx.streams.require('long_poll', request.identity) : undefined;
  const rows = await answerPendingList(
    ctx.waiters,
    {
      agentId: request.agentId.toLowerCase(),
      waitSeconds,
      signal: clientGone(res),
      hurry: ctx.shutdownSignal,
    },
    read,
  ).finally(release);
  if (rows !== 'aborted') return json(200, rows);
  // Nobody is listening any more; 499 ("client closed request") keeps the metrics honest.
  res.status(499).end();
  return undefined;
}

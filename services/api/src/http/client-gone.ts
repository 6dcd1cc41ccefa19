import type { ServerResponse } from 'node:http';

/** Aborts when the client goes away before we answered ('close' also fires after a normal finish: harmless then). */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  // 'close' also fires after a normal finish; only a response that never finished means the
  // client left (building an AbortError per request showed up in the profile).
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

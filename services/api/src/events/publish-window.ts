/**
 * How long the NATS publishes of finished writes gather before they go out together. A write's
 * event is already safe in the outbox and its wake-ups are hints, so neither needs to leave the
 * instant its statement commits; sent together, the writes that finish within one window share
 * one socket write to nats-server (and their acks one read) instead of paying a syscall pair
 * each. At 1,000 writes/s that is about five per write (bench:api, ADR 0028); at a trickle it
 * only delays an event or a wake-up by this much.
 */
export const PUBLISH_WINDOW_MS = 5;

export interface PublishWindow {
  /** Runs `send` when the current window closes, after everything deferred before it. */
  defer(send: () => void): void;
  /** Closes the window now (shutdown). */
  flush(): void;
}

export function createPublishWindow(windowMs: number = PUBLISH_WINDOW_MS): PublishWindow {
  let queue: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  // One synchronous run: nats.js writes everything it was handed before the next microtask checkpoint at once.
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const sends = queue;
    queue = [];
    for (const send of sends) send();
  };
  return {
    defer(send) {
      queue.push(send);
      if (windowMs <= 0) flush();
      else timer ??= setTimeout(flush, windowMs);
    },
    flush,
  };
}

/**
 * The NATS publishes of finished writes go out at most once per window: the first after a quiet
 * spell at once (end of the current event-loop turn), later ones gather until the window since
 * the last send has passed. Under load the writes that commit within one window are handed to
 * nats.js in one synchronous run, so they share one socket write to nats-server (and their acks
 * one read) instead of paying a syscall pair each; a lone write waits for nothing. A write's
 * event is already safe in the outbox and wake-ups are hints, so neither loses anything by
 * waiting a few ms (ADR 0028).
 */
export const PUBLISH_WINDOW_MS = 5;

export interface PublishWindow {
  /** Runs `send` with the next batch, after everything deferred before it. */
  defer(send: () => void): void;
  /** Sends the waiting batch now (shutdown). */
  flush(): void;
}

export function createPublishWindow(windowMs: number = PUBLISH_WINDOW_MS): PublishWindow {
  let queue: (() => void)[] = [];
  /** Cancels the scheduled send; set while one is scheduled. */
  let cancel: (() => void) | undefined;
  let lastSent = -Infinity;
  // One synchronous run: nats.js writes everything it was handed before the next microtask checkpoint at once.
  const flush = () => {
    cancel?.();
    cancel = undefined;
    lastSent = performance.now();
    const sends = queue;
    queue = [];
    for (const send of sends) send();
  };
  return {
    defer(send) {
      queue.push(send);
      if (cancel) return;
      const wait = lastSent + windowMs - performance.now();
      if (wait <= 0) {
        const immediate = setImmediate(flush);
        cancel = () => clearImmediate(immediate);
      } else {
        const timeout = setTimeout(flush, wait);
        cancel = () => clearTimeout(timeout);
      }
    },
    flush,
  };
}

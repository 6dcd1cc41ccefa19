/**
 * Wakes the delivery loop every `intervalMs` and, in between, at the earliest retry that falls
 * due, so a 2 s backoff is not stretched to the polling interval. One timer at a time.
 */
export interface WakeTimer {
  start(): void;
  /** Wake at this epoch-ms time (ignored if a wake-up is already due sooner). */
  at(time: number): void;
  stop(): void;
}

export function createWakeTimer(onWake: () => void, intervalMs: number): WakeTimer {
  let interval: NodeJS.Timeout | undefined;
  let next: { time: number; timer: NodeJS.Timeout } | undefined;
  let stopped = false;
  return {
    start() {
      interval = setInterval(onWake, intervalMs);
      interval.unref();
    },
    at(time) {
      if (stopped || (next && next.time <= time) || time - Date.now() >= intervalMs) return;
      if (next) clearTimeout(next.timer);
      const timer = setTimeout(
        () => {
          next = undefined;
          onWake();
        },
        Math.max(0, time - Date.now()) + 5,
      );
      timer.unref();
      next = { time, timer };
    },
    stop() {
      stopped = true;
      clearInterval(interval);
      if (next) clearTimeout(next.timer);
    },
  };
}

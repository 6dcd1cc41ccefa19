/** Brokkr's per-container limit: 100 lines in a fixed 1-second window. */
export const LINES_PER_WINDOW = 100;
export const WINDOW_MS = 1000;

export interface Gap {
  key: string;
  /** When the first line of the window was dropped. */
  since: Date;
  dropped: number;
}

/**
 * Per-container log-line limiter (key: agent, stack, namespace, pod, container). Over-limit lines
 * are dropped and counted; `closedGaps` hands back each finished window that dropped lines with
 * the real count (Brokkr's gap marker always says 1).
 */
export class LineRateLimiter {
  private readonly windows = new Map<string, { start: number; lines: number; dropped: number; since: Date | undefined }>();
  private finished: Gap[] = [];

  constructor(
    private readonly limit = LINES_PER_WINDOW,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** true: keep the line. A new window closes the previous one's gap first (see `closedGaps`). */
  admit(key: string, now = Date.now()): boolean {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (w && w.dropped > 0) this.finished.push({ key, since: w.since!, dropped: w.dropped });
      w = { start: now, lines: 0, dropped: 0, since: undefined };
      this.windows.set(key, w);
    }
    if (w.lines < this.limit) {
      w.lines += 1;
      return true;
    }
    w.dropped += 1;
    w.since ??= new Date(now);
    return false;
  }

  /** Gaps of windows that ended (by time or by a newer line), and forgets containers idle for a minute. */
  closedGaps(now = Date.now()): Gap[] {
    for (const [key, w] of this.windows) {
      if (now - w.start < this.windowMs) continue;
      if (w.dropped > 0) {
        this.finished.push({ key, since: w.since!, dropped: w.dropped });
        w.dropped = 0;
      }
      if (now - w.start > 60_000) this.windows.delete(key);
    }
    const out = this.finished;
    this.finished = [];
    return out;
  }
}

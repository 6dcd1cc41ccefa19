/** Brokkr's per-container limit: 100 lines in a fixed 1-second window. */
export const LINES_PER_WINDOW = 100;
export const WINDOW_MS = 1000;

export interface Gap {
  since: Date;
  dropped: number;
}

/**
 * One container's limiter. Over-limit lines are dropped and counted; `takeGap` hands the count
 * back once the window that dropped them is over, so one `log_gap` carries the real number
 * (Brokkr's always says 1).
 */
export class ContainerRateLimit {
  private windowStart = Number.NEGATIVE_INFINITY;
  private lines = 0;
  private gap: Gap | undefined;

  constructor(
    private readonly limit = LINES_PER_WINDOW,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** true: send the line. */
  admit(now = Date.now()): boolean {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.lines = 0;
    }
    if (this.lines < this.limit) {
      this.lines += 1;
      return true;
    }
    if (this.gap) this.gap.dropped += 1;
    else this.gap = { since: new Date(now), dropped: 1 };
    return false;
  }

  /** The lines dropped in windows that are over (once), or undefined. */
  takeGap(now = Date.now()): Gap | undefined {
    const gap = this.gap;
    if (!gap) return undefined;
    const windowOver = now - this.windowStart >= this.windowMs || gap.since.getTime() < this.windowStart;
    if (!windowOver) return undefined;
    this.gap = undefined;
    return gap;
  }
}

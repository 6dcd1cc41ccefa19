/** A token bucket: `ratePerSecond` tokens refill continuously, at most `burst` are held. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    now = Date.now(),
  ) {
    this.tokens = burst;
    this.last = now;
  }

  tryTake(now = Date.now()): boolean {
    if (!this.hasToken(now)) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whether a token is there, without taking it. */
  hasToken(now = Date.now()): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSecond);
    this.last = now;
    return this.tokens >= 1;
  }
}

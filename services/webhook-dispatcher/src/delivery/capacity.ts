/**
 * How many POSTs this replica has going, in total and per endpoint (URL host:port). Claims are
 * sized to the free total and, per subscription, to its endpoint's free slots; a claimed row that
 * still finds its endpoint full (two subscriptions to one host) is handed back at once. So a row
 * is never parked behind a slow receiver while its lease runs, and one slow receiver holds at
 * most `perHost` of the slots, leaving the rest to everyone else.
 */
export class EndpointCapacity {
  private held = 0;
  private readonly byHost = new Map<string, number>();
  // Learned from claimed rows (the URL is encrypted in the database); lets the claim size each
  // subscription's share. Updated on every claim, so a changed URL is picked up.
  private readonly hostOfSubscription = new Map<string, string>();

  constructor(
    private readonly total: number,
    private readonly perHost: number,
  ) {}

  get inUse(): number {
    return this.held;
  }

  free(): number {
    return Math.max(0, this.total - this.held);
  }

  tryAcquire(subscriptionId: string, host: string): boolean {
    this.hostOfSubscription.set(subscriptionId, host);
    const n = this.byHost.get(host) ?? 0;
    if (n >= this.perHost || this.held >= this.total) return false;
    this.byHost.set(host, n + 1);
    this.held++;
    return true;
  }

  release(host: string): void {
    const n = this.byHost.get(host) ?? 0;
    if (n <= 1) this.byHost.delete(host);
    else this.byHost.set(host, n - 1);
    this.held = Math.max(0, this.held - 1);
  }

  /** Free slots of each known subscription's endpoint (0 = leave its rows to other replicas). */
  roomBySubscription(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [sub, host] of this.hostOfSubscription) out.set(sub, Math.max(0, this.perHost - (this.byHost.get(host) ?? 0)));
    return out;
  }

  /** For a subscription not seen yet: a whole endpoint's worth. */
  get defaultRoom(): number {
    return this.perHost;
  }
}

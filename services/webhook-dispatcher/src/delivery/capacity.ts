/**
 * How many POSTs this replica has going, in total and per endpoint (URL host:port). Claims are
 * sized to the free total, rows of endpoints already at their limit are not claimed at all, and a
 * claimed row that would exceed its endpoint's limit is handed back at once — so a row is never
 * parked behind a slow receiver while its lease runs, and one slow receiver holds at most
 * `perHost` of the slots, leaving the rest to everyone else.
 */
export class EndpointCapacity {
  private held = 0;
  private readonly byHost = new Map<string, number>();
  // Learned from claimed rows (the URL is encrypted in the database); lets the claim skip the
  // subscriptions of saturated endpoints. Updated on every claim, so a changed URL is picked up.
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

  saturatedSubscriptions(): string[] {
    const out: string[] = [];
    for (const [sub, host] of this.hostOfSubscription) {
      if ((this.byHost.get(host) ?? 0) >= this.perHost) out.push(sub);
    }
    return out;
  }
}

/**
 * Jobs waiting for a scarce worker (a chart renderer process, the api's template renderer
 * processes and YAML validator threads), one line per tenant, served in turn: the tenant served
 * last goes to the back. A tenant that queues many slow jobs waits behind itself, not in front of
 * everyone else, and fills only its own share of the waiting room (docs/security.md, "Denial of
 * service by an authenticated tenant").
 */
export class FairQueue<T> {
  // A Map iterates in insertion order: re-inserting a tenant moves it to the back.
  private readonly lines = new Map<string, T[]>();
  private size = 0;

  constructor(
    private readonly maxPerTenant: number,
    private readonly maxTotal: number,
  ) {}

  /** False when the tenant's share or the whole queue is full. */
  push(tenant: string, item: T): boolean {
    const line = this.lines.get(tenant) ?? [];
    if (line.length >= this.maxPerTenant || this.size >= this.maxTotal) return false;
    line.push(item);
    this.lines.set(tenant, line);
    this.size++;
    return true;
  }

  /**
   * Who gets the next free worker: of the waiting tenants that could use one (`eligible`), the
   * one with the fewest jobs at work (`atWork`), ties going to the one whose turn it is. A tenant
   * that keeps every worker busy thus loses the next free one to any tenant that waits.
   */
  next(atWork: (tenant: string) => number, eligible: (tenant: string) => boolean = () => true): string | undefined {
    let best: string | undefined;
    let fewest = Infinity;
    for (const tenant of this.lines.keys()) {
      if (!eligible(tenant)) continue;
      const working = atWork(tenant);
      if (working < fewest) [best, fewest] = [tenant, working];
    }
    return best;
  }

  count(tenant: string): number {
    return this.lines.get(tenant)?.length ?? 0;
  }

  /** The tenant's next job; the tenant goes to the back of the turn order. */
  take(tenant: string): T | undefined {
    const line = this.lines.get(tenant);
    const item = line?.shift();
    if (!line || item === undefined) return undefined;
    this.size--;
    this.lines.delete(tenant);
    if (line.length > 0) this.lines.set(tenant, line);
    return item;
  }

  drain(tenant?: string): T[] {
    const tenants = tenant === undefined ? [...this.lines.keys()] : [tenant];
    const items = tenants.flatMap((t) => this.lines.get(t) ?? []);
    for (const t of tenants) this.lines.delete(t);
    this.size -= items.length;
    return items;
  }
}

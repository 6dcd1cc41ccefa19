/** A FIFO with a capacity: `push` refuses (returns false) when full instead of growing. */
export class BoundedQueue<T> {
  private items: T[] = [];
  private head = 0;

  constructor(readonly capacity: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): boolean {
    if (this.length >= this.capacity) return false;
    this.items.push(item);
    return true;
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    // Compact now and then so a long-lived queue does not keep its history.
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  some(predicate: (item: T) => boolean): boolean {
    for (let i = this.head; i < this.items.length; i++) if (predicate(this.items[i]!)) return true;
    return false;
  }
}

/** Drains a queue one item at a time through an async handler (never two at once). */
export class SerialWorker<T> {
  private running = false;

  constructor(
    private readonly queue: BoundedQueue<T>,
    private readonly handle: (item: T) => Promise<void>,
  ) {}

  offer(item: T): boolean {
    if (!this.queue.push(item)) return false;
    if (!this.running) void this.drain();
    return true;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let item = this.queue.shift(); item !== undefined; item = this.queue.shift()) await this.handle(item);
    } finally {
      this.running = false;
    }
  }
}

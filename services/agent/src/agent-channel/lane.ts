/** A FIFO of encoded frames that refuses new ones when full (the caller falls back or drops). */
export class Lane {
  private items: { type: string; text: string }[] = [];

  constructor(readonly capacity: number) {}

  get length(): number {
    return this.items.length;
  }

  push(type: string, text: string): boolean {
    if (this.items.length >= this.capacity) return false;
    this.items.push({ type, text });
    return true;
  }

  shift(): { type: string; text: string } | undefined {
    return this.items.shift();
  }
}

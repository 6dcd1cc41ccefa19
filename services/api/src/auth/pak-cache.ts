import type { Identity } from './identity.ts';

interface Entry {
  identity: Identity;
  expiresAt: number;
}

/** Enough for every agent and generator of a large fleet; the oldest entry goes first beyond it. */
const MAX_ENTRIES = 50_000;

/**
 * Positive results only, keyed by PAK hash. `generation` guards against a lookup that read the
 * database before a rotation committed and finishes after the invalidation arrived: such a
 * lookup must not put the old identity back.
 */
export class PakCache {
  private readonly entries = new Map<string, Entry>();
  private generationCounter = 0;

  constructor(private readonly ttlMs: number) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get generation(): number {
    return this.generationCounter;
  }

  get(hash: string, now = Date.now()): Identity | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.identity;
  }

  /** Stores `identity` unless an invalidation happened since `generation` was read. */
  set(hash: string, identity: Identity, generation: number, now = Date.now()): void {
    if (!this.enabled || generation !== this.generationCounter) return;
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { identity, expiresAt: now + this.ttlMs });
  }

  invalidate(hash: string): void {
    this.generationCounter += 1;
    this.entries.delete(hash);
  }

  clear(): void {
    this.generationCounter += 1;
    this.entries.clear();
  }
}

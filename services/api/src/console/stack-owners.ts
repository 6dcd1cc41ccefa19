import type { Queryable } from '@brokkr/db';

const TTL_MS = 10_000;

/**
 * Which generator owns a stack, cached briefly: the live stream asks for every event a generator
 * could see, and a burst of events about one stack should cost one query. An owner change or
 * deletion drops the entry on every replica (`forget`, from events/stack-invalidation.ts); a
 * lost hint leaves a stale answer for at most TTL_MS.
 */
export class StackOwners {
  readonly #cache = new Map<string, { owner: string | null; at: number }>();

  constructor(private readonly db: Queryable) {}

  async ownerOf(stackId: string): Promise<string | null> {
    const hit = this.#cache.get(stackId);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.owner;
    const { rows } = await this.db.query<{ generator_id: string }>('SELECT generator_id FROM stacks WHERE id = $1', [stackId]);
    const owner = rows[0]?.generator_id ?? null;
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(stackId, { owner, at: Date.now() });
    return owner;
  }

  /** Drops the stack's entry (every entry when undefined). */
  forget(stackId: string | undefined): void {
    if (stackId === undefined) this.#cache.clear();
    else this.#cache.delete(stackId.toLowerCase());
  }
}

/** A tick repeats a bounded statement at most this often, so one tick never runs unbounded. */
export const MAX_BATCHES_PER_TICK = 100;

/**
 * Runs a statement that touches at most `limit` rows again while it keeps filling whole
 * batches. Every run is its own short statement (own transaction, short row locks), and the
 * loop stops after MAX_BATCHES_PER_TICK: the remainder waits for the next tick.
 */
export async function repeatWhileFull(limit: number, statement: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES_PER_TICK; i++) {
    const affected = await statement(limit);
    total += affected;
    if (affected < limit) break;
  }
  return total;
}

import type { Queryable } from '@brokkr/db';

const CHECK_TIMEOUT_MS = 750;
const VERDICT_TTL_MS = 2000;

/**
 * Brokkr's readiness rule: `SELECT 1` within 750 ms, the verdict (either way) cached for 2 s so a
 * probe storm never turns into a query storm. Concurrent probes share one check.
 */
export function readinessCheck(db: Queryable): () => Promise<boolean> {
  let verdict: { ready: boolean; at: number } | undefined;
  let running: Promise<boolean> | undefined;

  async function check(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
    });
    const query = db.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  return async () => {
    if (verdict && Date.now() - verdict.at < VERDICT_TTL_MS) return verdict.ready;
    running ??= check()
      .then((ready) => {
        verdict = { ready, at: Date.now() };
        return ready;
      })
      .finally(() => (running = undefined));
    return running;
  };
}

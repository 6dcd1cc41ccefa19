/** Resolves when a dependency is usable, rejects (or never settles) when it is not. */
export type ReadinessCheck = () => Promise<void>;

export interface ReadinessResult {
  ok: boolean;
  /** Check name → why it failed. */
  failed: Record<string, string>;
}

export interface ReadinessOptions {
  /** Each check gets this long (Brokkr caps its pool checkout at 750 ms). */
  timeoutMs?: number;
  /** A verdict is reused this long so a probe storm cannot hammer Postgres. Brokkr: 2 s. */
  cacheMs?: number;
}

function withTimeout(check: ReadinessCheck, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  // Promise.resolve().then(check) turns a synchronous throw into a rejection.
  return Promise.race([Promise.resolve().then(check), timeout]).finally(() => clearTimeout(timer));
}

export async function runChecks(checks: Record<string, ReadinessCheck>, timeoutMs = 750): Promise<ReadinessResult> {
  const names = Object.keys(checks);
  const outcomes = await Promise.allSettled(names.map((name) => withTimeout(checks[name]!, timeoutMs)));
  const failed: Record<string, string> = {};
  outcomes.forEach((outcome, i) => {
    if (outcome.status === 'rejected') {
      failed[names[i]!] = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
    }
  });
  return { ok: Object.keys(failed).length === 0, failed };
}

/**
 * The readiness verdict as a function, shared by the health server and the api's express
 * routes. Concurrent callers share one run of the checks.
 */
export function createReadiness(checks: Record<string, ReadinessCheck>, options: ReadinessOptions = {}): () => Promise<ReadinessResult> {
  const cacheMs = options.cacheMs ?? 2000;
  let cached: { at: number; result: Promise<ReadinessResult> } | undefined;
  return () => {
    const now = Date.now();
    if (cached && now - cached.at < cacheMs) return cached.result;
    const result = runChecks(checks, options.timeoutMs);
    cached = { at: now, result };
    return result;
  };
}

/** Anything with pg's `query` (a Pool or a Db). */
export interface PgQueryable {
  query(text: string): Promise<unknown>;
}

export function pgCheck(pool: PgQueryable): ReadinessCheck {
  return async () => {
    await pool.query('SELECT 1');
  };
}

/** The parts of a NatsConnection the check needs. */
export interface NatsPingable {
  isClosed(): boolean;
  flush(): Promise<void>;
}

/** A round trip to the server; while reconnecting it does not answer and the check times out. */
export function natsCheck(nc: NatsPingable): ReadinessCheck {
  return async () => {
    if (nc.isClosed()) throw new Error('connection closed');
    await nc.flush();
  };
}

import { errorKind } from '../errors/api-error.ts';
import { TokenBucket } from './token-bucket.ts';

/** Enough for a flood of distinct hashes; beyond it the oldest entry goes first. */
const MAX_ENTRIES = 10_000;

export const unknownPakThrottled = errorKind(
  429,
  'too_many_unknown_paks',
  'Too many unknown PAKs from this address; retry later with a valid PAK',
);

export interface UnknownPakLimits {
  /** Lookups of unknown PAKs one client address may cause at once. */
  burst: number;
  /** ...refilled at this rate. */
  perMinute: number;
  /** How long a hash that matched nobody is answered 401 without a lookup. */
  negativeTtlMs: number;
}

/**
 * What an unknown PAK costs the database: nothing while its hash is remembered as unknown (the
 * negative cache), and `burst` lookups of its own (refilled at `perMinute`) per client address for
 * hashes it has not seen. Past that budget an address's PAKs are still looked up (a valid PAK that
 * is not cached cannot be told from an unknown one without the lookup, and behind an ingress many
 * clients share one address), but batched with every other over-budget lookup of the replica, one
 * statement at a time (authenticator.ts, shared-lookups.ts); each that turns out unknown is 429
 * until a token is back.
 */
export class UnknownPaks {
  private readonly unknown = new Map<string, number>();
  private readonly budgets = new Map<string, TokenBucket>();

  constructor(private readonly limits: UnknownPakLimits) {}

  /** The hash matched nobody recently: answer 401 without a lookup. */
  isKnownUnknown(hash: string, now = Date.now()): boolean {
    const expiresAt = this.unknown.get(hash);
    if (expiresAt === undefined) return false;
    if (expiresAt > now) return true;
    this.unknown.delete(hash);
    return false;
  }

  /** The address may cause another lookup of its own of a hash that is not cached. */
  mayLookUp(origin: string, now = Date.now()): boolean {
    return this.budgets.get(origin)?.hasToken(now) ?? true;
  }

  /** A lookup from `origin` found nobody: remember the hash, charge the address. */
  missed(hash: string, origin: string | undefined, now = Date.now()): void {
    if (this.limits.negativeTtlMs > 0) remember(this.unknown, hash, now + this.limits.negativeTtlMs);
    if (origin === undefined) return;
    let budget = this.budgets.get(origin);
    if (!budget) remember(this.budgets, origin, (budget = new TokenBucket(this.limits.perMinute / 60, this.limits.burst, now)));
    budget.tryTake(now);
  }

  /** A credential was rotated, deleted or changed state: an unknown hash may be valid now. */
  forget(): void {
    this.unknown.clear();
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_ENTRIES) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

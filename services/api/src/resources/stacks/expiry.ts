import { errorKind, raising } from '../../errors/api-error.ts';

const invalidExpiry = errorKind(400, 'invalid_expiry', 'Give expires_at or ttl_seconds, not both');
const expiryInPast = errorKind(400, 'expiry_in_past', 'expires_at must be in the future');

export interface ExpiryInput {
  expires_at?: string | undefined;
  ttl_seconds?: number | undefined;
}

/**
 * The instant a stack expires, from what the client gave (undefined: nothing given). An instant
 * already past is refused rather than deleting the stack at the next maintenance tick: that is
 * never what someone setting an expiry means.
 */
export const resolveExpiry = raising(
  (input: ExpiryInput, now: Date = new Date()): Date | undefined => {
    const { expires_at: at, ttl_seconds: ttl } = input;
    if (at !== undefined && ttl !== undefined) throw invalidExpiry();
    if (ttl !== undefined) return new Date(now.getTime() + ttl * 1000);
    if (at === undefined) return undefined;
    const instant = new Date(at);
    if (instant.getTime() <= now.getTime()) throw expiryInPast();
    return instant;
  },
  invalidExpiry,
  expiryInPast,
);

/** Like resolveExpiry, but one of the two fields is required. */
export const requireExpiry = raising((input: ExpiryInput): Date => {
  const at = resolveExpiry(input);
  if (!at) throw invalidExpiry.with('Give expires_at or ttl_seconds');
  return at;
}, resolveExpiry);

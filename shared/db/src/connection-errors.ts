/**
 * Whether an error means "the database cannot be reached right now" (server down, restarting,
 * shutting down, out of connections, network gone) rather than "this statement failed". The
 * first is nobody's fault and goes away by itself: the api answers it with 503 and Retry-After,
 * never with a 500.
 */

/** Socket errors on the way to the server (or from its DNS name). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs: class 08 connection exceptions; 57P01 admin_shutdown (also what
 * pg_terminate_backend sends), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up,
 * in recovery); class 53 insufficient resources (53300 too_many_connections, disk full, …).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('53');
}

/** What node-postgres, pg-pool and knex say when the connection dies or cannot be had. */
const MESSAGES = [
  /^Connection terminated/i, // "Connection terminated unexpectedly", "… due to connection timeout"
  /timeout exceeded when trying to connect/i, // pg-pool connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable/i,
  /^Client was closed and is not queryable/i,
  /^Cannot use a pool after calling end on the pool/i, // shutting down
  /^Knex: Timeout acquiring a connection/i,
];

const MAX_DEPTH = 4;

function ownCode(err: object): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function matchesItself(err: object): boolean {
  const code = ownCode(err);
  if (code !== undefined && (NETWORK_CODES.has(code) || (code.length === 5 && isUnavailableSqlState(code)))) return true;
  if ((err as { name?: unknown }).name === 'KnexTimeoutError') return true;
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && MESSAGES.some((m) => m.test(message));
}

/** Looks at the error, its `cause` and, for AggregateError (Node's happy-eyeballs connect), every inner error. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > MAX_DEPTH) return false;
  if (matchesItself(err)) return true;
  if (err instanceof AggregateError && err.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable((err as { cause?: unknown }).cause, depth + 1);
}

import { isRetryable } from '../kube/errors.ts';

/** A pass step failed for one or more objects; the message lists each of them on its own line. */
export class ReconcileError extends Error {
  /** Every underlying failure was transient (429/5xx/no answer): the same step may succeed later. */
  transient = false;

  constructor(
    readonly lines: string[],
    headline?: string,
  ) {
    super([...(headline ? [headline] : []), ...lines].join('\n'));
    this.name = 'ReconcileError';
  }

  /** One line per failure; transient when every cause is a retryable Kubernetes failure. */
  static from(causes: unknown[], line: (cause: unknown, index: number) => string): ReconcileError {
    const err = new ReconcileError(causes.map(line));
    err.transient = causes.length > 0 && causes.every(isRetryable);
    return err;
  }
}

/** Event messages stay readable in a UI and bounded in the database. */
export function eventMessage(err: unknown, max = 4000): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

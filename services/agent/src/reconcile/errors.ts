/** A pass step failed for one or more objects; the message lists each of them on its own line. */
export class ReconcileError extends Error {
  constructor(
    readonly lines: string[],
    headline?: string,
  ) {
    super([...(headline ? [headline] : []), ...lines].join('\n'));
    this.name = 'ReconcileError';
  }
}

/** Event messages stay readable in a UI and bounded in the database. */
export function eventMessage(err: unknown, max = 4000): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Typed errors shared by every package. Each sets `name` and keeps its cause, so logs show
 * what went wrong where; `coerceError` normalises anything thrown at a boundary.
 */
export class BrokkrError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Configuration is missing or invalid; the message names every offending variable. */
export class ConfigError extends BrokkrError {
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(message);
  }
}

/** A dependency (Postgres, NATS, Kubernetes) could not be reached or refused the request. */
export class DependencyError extends BrokkrError {}

export function coerceError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new BrokkrError(typeof value === 'string' ? value : JSON.stringify(value));
}

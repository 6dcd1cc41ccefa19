import { BrokerError } from '../broker/http.ts';
import { isRetryable, KubeApiError } from '../kube/errors.ts';
import { ReconcileError } from '../reconcile/errors.ts';

/** A work order failed with a known verdict: `retryable` says whether running it again may succeed. */
export class WorkOrderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'WorkOrderError';
  }
}

/** The order was cut off (shutdown): it is not completed, the broker's stale-claim release hands it out again. */
export class WorkOrderAborted extends Error {
  constructor() {
    super('work order cut off by shutdown');
    this.name = 'WorkOrderAborted';
  }
}

/**
 * Whether a failure is worth another run (the broker schedules one, with backoff, while retries
 * remain): transient Kubernetes or network failures are (429, 5xx, no answer); bad YAML, a
 * forbidden or unknown kind, a failed Job or build, a timed-out watch are not.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof WorkOrderError) return err.retryable;
  if (err instanceof ReconcileError) return err.transient;
  if (err instanceof KubeApiError) return isRetryable(err);
  if (err instanceof BrokerError) return err.transient;
  return false;
}

import type { KubeObject } from '../manifest/parse.ts';
import { OWNER_ANNOTATION, OWNER_LABEL, STACK_LABEL, WORK_ORDER_LABEL } from '../manifest/keys.ts';
import type { ApplyContext } from '../reconcile/apply-stack.ts';
import type { Stamper } from '../reconcile/plan.ts';

/** What a work-order runner needs: the apply machinery (with an empty inventory), the claim time, the stop signal. */
export interface WorkOrderContext {
  apply: ApplyContext;
  /** When the claim was requested (the Job watch window counts from here, as Brokkr's). */
  claimedAt: number;
  /** Aborted when a shutdown's grace ran out: the runner gives up without a verdict. */
  signal: AbortSignal;
  /** Kubernetes polls of a Job or BuildRun. */
  pollMs: number;
}

/**
 * A work order's stamp: the work-order id label and our owner label (not on someone else's object
 * of the same name), and never a stack label, so reconciliation never lists, prunes or deletes what
 * a work order created.
 */
export function workOrderStamper(agentId: string, orderId: string): Stamper {
  return (object: KubeObject, { owned, namespace }) => {
    const copy = structuredClone(object);
    const labels: Record<string, string> = { ...(copy.metadata.labels ?? {}), [WORK_ORDER_LABEL]: orderId };
    const annotations: Record<string, string> = { ...(copy.metadata.annotations ?? {}) };
    delete labels[STACK_LABEL];
    if (owned) {
      labels[OWNER_LABEL] = agentId;
      annotations[OWNER_ANNOTATION] = agentId;
    } else {
      delete labels[OWNER_LABEL];
    }
    copy.metadata.labels = labels;
    if (Object.keys(annotations).length) copy.metadata.annotations = annotations;
    if (namespace === undefined) delete copy.metadata.namespace;
    else copy.metadata.namespace = namespace;
    return copy;
  };
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export function conditionsOf(live: Record<string, unknown> | undefined): Condition[] {
  const conditions = (live?.['status'] as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as Condition[]) : [];
}

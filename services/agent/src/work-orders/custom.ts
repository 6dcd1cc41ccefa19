import type { WorkOrder } from '@brokkr/contracts';
import { ManifestError, parseManifests, type KubeObject } from '../manifest/parse.ts';
import { applyObjects } from '../reconcile/apply-stack.ts';
import type { PlannedObject } from '../reconcile/plan.ts';
import { errorMessage, sleep } from '../util/async.ts';
import { conditionsOf, workOrderStamper, type WorkOrderContext } from './context.ts';
import { isTransient, WorkOrderAborted, WorkOrderError } from './errors.ts';

const isJob = (o: KubeObject) => o.apiVersion === 'batch/v1' && o.kind === 'Job';
const ref = (p: PlannedObject) => `${p.namespace ?? ''}/${p.object.metadata.name}`;

/** Parses a work order's YAML; bad YAML and an empty document stream are terminal. */
export function parseOrder(yaml: string): KubeObject[] {
  let docs: KubeObject[];
  try {
    docs = parseManifests(yaml);
  } catch (err) {
    if (err instanceof ManifestError) throw new WorkOrderError(`Invalid YAML: ${err.message}`, false);
    throw err;
  }
  if (docs.length === 0) throw new WorkOrderError('No valid Kubernetes objects found in YAML', false);
  return docs;
}

/**
 * How long Jobs are watched: Brokkr's `claimed + claim_timeout − max(10 %, 60 s)`, so the verdict
 * reaches the broker before the claim goes stale; the margin is at most half the timeout (Brokkr's
 * leaves no window at all for a claim timeout of 60 s or less).
 */
export function watchDeadline(order: Pick<WorkOrder, 'claim_timeout_seconds'>, claimedAt: number): number {
  const timeoutMs = order.claim_timeout_seconds * 1000;
  const margin = Math.min(Math.max(timeoutMs / 10, 60_000), timeoutMs / 2);
  return claimedAt + timeoutMs - margin;
}

/**
 * `custom`: the YAML applied like a deployment object (same order, dry run first, server-side
 * apply) but stamped with the work-order id instead of a stack; then every batch/v1 Job in it is
 * watched, one after another, to its Complete or Failed condition. Nothing is deleted afterwards
 * (as Brokkr): a finished Job stays for its logs until its ttlSecondsAfterFinished or an admin.
 */
export async function runCustom(ctx: WorkOrderContext, order: WorkOrder): Promise<string> {
  const docs = parseOrder(order.yaml_content);
  let planned: PlannedObject[];
  try {
    planned = (await applyObjects(ctx.apply, docs, workOrderStamper(ctx.apply.agentId, order.id))).planned;
  } catch (err) {
    throw new WorkOrderError(`failed to apply work order objects: ${errorMessage(err)}`, isTransient(err));
  }
  const jobs = planned.filter((p) => isJob(p.object));
  const others = planned.filter((p) => !isJob(p.object));
  const kinds = [...new Set(others.map((p) => p.object.kind))].join(', ');
  const head = `Applied ${planned.length} resource(s).`;
  if (jobs.length === 0) {
    return `${head} No batch/v1 Job present, so nothing was watched to completion: ${others.length} resource(s) of kind(s) ${kinds} applied only, not monitored. Only batch/v1 Jobs have a terminal state the agent waits on.`;
  }
  const deadline = watchDeadline(order, ctx.claimedAt);
  for (const job of jobs) await watchJob(ctx, job, deadline);
  const tail = others.length ? ` ${others.length} resource(s) of kind(s) ${kinds} applied only, not monitored.` : '';
  return `${head} Job(s) ${jobs.map(ref).join(', ')} completed successfully.${tail}`;
}

/** Reads the Job until Complete=True or Failed=True; the status is read once more before each deadline check. */
async function watchJob(ctx: WorkOrderContext, job: PlannedObject, deadline: number): Promise<void> {
  const name = ref(job);
  for (;;) {
    if (ctx.signal.aborted) throw new WorkOrderAborted();
    const live = await ctx.apply.objects.get(job.resource, job.namespace, job.object.metadata.name);
    if (!live) throw new WorkOrderError(`Job ${name} was applied but no longer exists (deleted while it was watched)`, false);
    const conditions = conditionsOf(live);
    if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return;
    const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
    if (failed)
      throw new WorkOrderError(`Job ${name} ran and failed: ${failed.reason ?? 'Failed'}: ${failed.message ?? 'no message'}`, false);
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new WorkOrderError(
        `Job ${name} did not finish within the watch window (the claim timeout less its margin). The Job was NOT cancelled and may still run.`,
        false,
      );
    }
    await sleep(Math.min(ctx.pollMs, left), ctx.signal);
  }
}

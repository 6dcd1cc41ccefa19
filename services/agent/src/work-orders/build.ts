import type { WorkOrder } from '@brokkr/contracts';
import type { ApiResource } from '../kube/discovery.ts';
import { KubeApiError } from '../kube/errors.ts';
import type { LiveResource } from '../kube/objects.ts';
import { OWNER_LABEL, WORK_ORDER_LABEL } from '../manifest/keys.ts';
import type { KubeObject } from '../manifest/parse.ts';
import { applyObjects } from '../reconcile/apply-stack.ts';
import { errorMessage, sleep } from '../util/async.ts';
import { conditionsOf, workOrderStamper, type WorkOrderContext } from './context.ts';
import { parseOrder } from './custom.ts';
import { isTransient, WorkOrderAborted, WorkOrderError } from './errors.ts';

/** Brokkr's bound on a build, whatever the claim timeout. */
export const BUILD_TIMEOUT_MS = 900_000;
const BUILDRUN_API_VERSION = 'shipwright.io/v1beta1';

const isBuild = (o: KubeObject) => o.kind === 'Build' && o.apiVersion.startsWith('shipwright.io');
const isWorkOrderDoc = (o: KubeObject) => o.kind === 'WorkOrder' && o.apiVersion.startsWith('brokkr.io');

interface BuildRunStatus {
  output?: { digest?: string | null };
  failureDetails?: { reason?: string; message?: string };
}

/** The Build to run: the first Shipwright Build in the YAML, else a brokkr.io WorkOrder's spec.buildRef.name. */
function findBuild(docs: KubeObject[], defaultNamespace: string): { name: string; namespace: string } {
  const build = docs.find(isBuild);
  if (build) return { name: build.metadata.name, namespace: build.metadata.namespace ?? defaultNamespace };
  const wo = docs.find(isWorkOrderDoc);
  const name = (wo?.spec as { buildRef?: { name?: unknown } } | undefined)?.buildRef?.name;
  if (wo && typeof name === 'string' && name) return { name, namespace: (wo.metadata.namespace as string | undefined) ?? defaultNamespace };
  throw new WorkOrderError('No Build resource or buildRef found in YAML content', false);
}

/**
 * `build` (Shipwright): the Build(s) in the YAML are applied, a BuildRun `<build>-<first 8 of the
 * order id>` is created and watched to its Succeeded condition; the result message is the image
 * digest. A BuildRun of that name left by an earlier run of the same order (an agent that died
 * mid-build) is watched instead of starting a second build. Nothing is deleted afterwards (as Brokkr).
 */
export async function runBuild(ctx: WorkOrderContext, order: WorkOrder): Promise<string | null> {
  const docs = parseOrder(order.yaml_content);
  const build = findBuild(docs, ctx.apply.watchNamespace ?? 'default');
  const builds = docs.filter(isBuild);
  if (builds.length) {
    try {
      await applyObjects(ctx.apply, builds, workOrderStamper(ctx.apply.agentId, order.id));
    } catch (err) {
      throw new WorkOrderError(`failed to apply the Build: ${errorMessage(err)}`, isTransient(err));
    }
  }
  const resource = await ctx.apply.discovery.resolve(BUILDRUN_API_VERSION, 'BuildRun');
  if (!resource) throw new WorkOrderError('Shipwright BuildRun CRD not found in cluster', false);
  const name = `${build.name}-${order.id.slice(0, 8)}`;
  await createBuildRun(ctx, resource, { ...build, runName: name, orderId: order.id });
  return watchBuildRun(ctx, resource, build.namespace, name);
}

async function createBuildRun(
  ctx: WorkOrderContext,
  resource: ApiResource,
  run: { name: string; namespace: string; runName: string; orderId: string },
): Promise<void> {
  const body = {
    apiVersion: BUILDRUN_API_VERSION,
    kind: 'BuildRun',
    metadata: {
      name: run.runName,
      namespace: run.namespace,
      labels: { [WORK_ORDER_LABEL]: run.orderId, 'shipwright.io/build': run.name, [OWNER_LABEL]: ctx.apply.agentId },
    },
    spec: { build: { name: run.name } },
  };
  try {
    await ctx.apply.objects.create(resource, run.namespace, body);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) {
      throw new WorkOrderError(`failed to create BuildRun '${run.runName}': ${errorMessage(err)}`, isTransient(err));
    }
    const existing = await ctx.apply.objects.get(resource, run.namespace, run.runName);
    if (existing?.metadata.labels?.[WORK_ORDER_LABEL] !== run.orderId)
      throw new WorkOrderError(`BuildRun '${run.namespace}/${run.runName}' already exists and belongs to another work order`, false);
    ctx.apply.logger.info({ buildRun: run.runName }, 'the BuildRun of an earlier run of this work order exists; watching it');
  }
}

/** Reads the BuildRun until Succeeded is True (→ the digest) or False (→ the failure), at most 900 s. */
async function watchBuildRun(ctx: WorkOrderContext, resource: ApiResource, namespace: string, name: string): Promise<string | null> {
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  for (;;) {
    if (ctx.signal.aborted) throw new WorkOrderAborted();
    const live = await ctx.apply.objects.get(resource, namespace, name);
    if (!live) throw new WorkOrderError(`BuildRun '${namespace}/${name}' was created but no longer exists`, false);
    const verdict = buildRunVerdict(live);
    if (verdict.done) return verdict.digest;
    const left = deadline - Date.now();
    if (left <= 0) throw new WorkOrderError(`BuildRun '${name}' timed out after ${BUILD_TIMEOUT_MS / 1000} seconds`, false);
    await sleep(Math.min(ctx.pollMs, left), ctx.signal);
  }
}

function buildRunVerdict(live: LiveResource): { done: false } | { done: true; digest: string | null } {
  const succeeded = conditionsOf(live).find((c) => c.type === 'Succeeded');
  const status = live.status as BuildRunStatus | undefined;
  if (succeeded?.status === 'True') return { done: true, digest: status?.output?.digest ?? null };
  if (succeeded?.status !== 'False') return { done: false };
  throw new WorkOrderError(failureMessage(status?.failureDetails, succeeded.message), false);
}

/** Brokkr's wording: the failure details, else the condition's message, else "Build failed". */
function failureMessage(details: BuildRunStatus['failureDetails'], conditionMessage: string | undefined): string {
  if (details) return `${details.reason ?? 'Unknown'}: ${details.message ?? 'No message'}`;
  return conditionMessage || 'Build failed';
}

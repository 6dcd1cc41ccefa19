import type { Logger } from '@brokkr/logger';
import type { GrantBook } from '../grants/book.ts';
import { ensureTenantNamespace } from '../grants/tenant-namespace.ts';
import type { DeploymentObject } from '../broker/types.ts';
import type { AgentMetrics } from '../metrics.ts';
import { parseManifests, type KubeObject } from '../manifest/parse.ts';
import { mapLimit } from '../util/async.ts';
import { CHECKSUM_ANNOTATION } from '../manifest/keys.ts';
import { waitForCrds } from './crds.ts';
import { ReconcileError } from './errors.ts';
import type { Inventory } from './inventory.ts';
import { stackClaim, type ClaimRule } from './ownership.ts';
import { describe, planObjects, stackStamper, type PlanContext, type PlannedObject, type Stamper } from './plan.ts';
import type { WaveGate, WaveWait } from './wave-progress.ts';
import { groupByWave, wavesOf, type Wave } from './waves.ts';

export interface ApplyContext extends PlanContext {
  metrics: AgentMetrics;
  logger: Logger;
  crdEstablishedTimeoutMs: number;
}

/**
 * A stack's apply: where its generator may place objects (the grant book), whether its manifest
 * may adopt objects no stack manages (BROKKR__AGENT__ADOPTION_ENABLED, and the grant), and the
 * Pod Security Standard of a confined generator's namespaces.
 */
export interface StackApplyContext extends Omit<ApplyContext, 'scope'> {
  adoptionEnabled: boolean;
  grants: GrantBook;
  tenantPodSecurity: 'privileged' | 'baseline' | 'restricted';
  /** Between the stack's waves (reconcile/wave-progress.ts); without it every wave is applied in one go. */
  waves?: WaveGate;
}

export interface AppliedStack {
  planned: PlannedObject[];
  /** uids of everything applied: prune keeps them whatever their old checksum said. */
  uids: Set<string>;
  /** Namespaces that hold an object of this deployment object (prune never deletes those). */
  namespaces: Set<string>;
  /** Kinds of the applies that changed a live object which existed before (drift, when the checksum is unchanged). */
  changed: string[];
  /**
   * Set when the apply stopped after a wave that is not healthy yet: the later waves are not
   * applied, `planned` holds what was, and nothing may be pruned. The stack is neither done nor failed.
   */
  waiting?: WaveWait;
}

const isCrd = (o: KubeObject) => o.kind === 'CustomResourceDefinition' && o.apiVersion.startsWith('apiextensions.k8s.io/');
const isNamespace = (o: KubeObject) => o.kind === 'Namespace' && o.apiVersion === 'v1';

type Mode = 'dry-run' | 'apply';

async function runPhase(ctx: ApplyContext, planned: PlannedObject[], mode: Mode, applied?: AppliedStack): Promise<void> {
  const dryRun = mode === 'dry-run';
  const results = await mapLimit(planned, ctx.concurrency, async (p) => {
    const live = await ctx.objects.apply(p.resource, p.object, dryRun);
    if (dryRun || !applied) return;
    ctx.metrics.applies.inc({ kind: p.object.kind });
    applied.uids.add(live.metadata.uid);
    p.live = live;
    if (p.existed && live.metadata.resourceVersion !== p.previousVersion) applied.changed.push(p.object.kind);
    p.existed = true;
  });
  const failed: { object: PlannedObject['object']; reason: unknown }[] = [];
  results.forEach((r, i) => {
    if (r.status === 'fulfilled') return;
    const p = planned[i]!;
    ctx.metrics.applyFailures.inc({ kind: p.object.kind });
    failed.push({ object: p.object, reason: r.reason });
  });
  if (failed.length) {
    const err = ReconcileError.from(
      failed.map((f) => f.reason),
      (reason, i) => `${dryRun ? 'Validation' : 'Apply'} failed for ${describe(failed[i]!.object)}: ${(reason as Error).message}`,
    );
    throw err;
  }
}

async function rollbackNamespaces(ctx: ApplyContext, created: PlannedObject[]): Promise<void> {
  for (const ns of created) {
    try {
      await ctx.objects.delete(ns.resource, undefined, ns.object.metadata.name);
      ctx.logger.info({ namespace: ns.object.metadata.name }, 'rolled back a namespace created by the failed pass');
    } catch (err) {
      ctx.logger.warn({ err, namespace: ns.object.metadata.name }, 'namespace rollback failed');
    }
  }
}

/**
 * One deployment object onto the cluster: CRDs (then wait until they are served), Namespaces,
 * then the other objects wave by wave (reconcile/waves.ts; without wave annotations all are one
 * wave): cluster-scoped objects, namespaced objects. Every phase is dry-run first, so an invalid
 * object fails the pass before anything of its phase is written. On failure, namespaces this pass
 * created are deleted again; nothing is pruned (the caller prunes only after success). An object
 * of the same name that another stack holds, or that no stack holds and the manifest does not
 * adopt, fails the pass (reconcile/ownership.ts).
 */
export async function applyStack(ctx: StackApplyContext, dobj: DeploymentObject): Promise<AppliedStack> {
  const scope = ctx.grants.scopeFor(dobj.stack_id);
  if (!scope) {
    await ctx.grants.refresh();
    throw new ReconcileError(
      [],
      `no grant on this agent covers stack ${dobj.stack_id} (the hub names no generator of it): nothing was applied`,
    );
  }
  const docs = parseManifests(dobj.yaml_content);
  const confined = !scope.wholeCluster;
  const podSecurity = confined && ctx.tenantPodSecurity !== 'privileged' ? ctx.tenantPodSecurity : undefined;
  return applyObjects(
    { ...ctx, scope },
    docs,
    stackStamper({ stackId: dobj.stack_id, checksum: dobj.yaml_checksum, objectId: dobj.id, agentId: ctx.agentId, podSecurity }),
    {
      claim: stackClaim(dobj.stack_id, ctx.adoptionEnabled && scope.grant.adoption),
      ...(ctx.waves ? { waves: ctx.waves } : {}),
      ...(confined ? { prepare: (planned) => ensureTenantNamespace({ ...ctx, podSecurity: ctx.tenantPodSecurity }, scope, planned) } : {}),
    },
  );
}

/** What a stack's apply adds to the plain one: its claim rule, and what to do before the namespaced objects' dry run. */
export interface ApplyRules {
  claim?: ClaimRule;
  /** Runs once the namespaced objects are planned (a confined generator's namespace is created there). */
  prepare?: (planned: PlannedObject[]) => Promise<void>;
  /** Asked after each wave but the last whether to go on (in-stack waves); without it every wave goes at once. */
  waves?: WaveGate;
}

/** The live object is already this version (its checksum): a resync, nothing of it to roll out. */
function isCurrent(inventory: Inventory, p: PlannedObject): boolean {
  const checksum = p.object.metadata.annotations?.[CHECKSUM_ANNOTATION];
  return checksum !== undefined && inventory.byKey.get(p.key)?.checksum === checksum;
}

/**
 * The objects other than CRDs and Namespaces, wave after wave (within one, cluster-scoped before
 * namespaced). After a wave, the gate decides whether to go on — unless every object of the later
 * waves is already live in this version (a resync), which waits for nothing.
 */
async function applyWaves(ctx: ApplyContext, waves: Wave<PlannedObject>[], applied: AppliedStack, gate?: WaveGate) {
  for (const [i, { wave, items }] of waves.entries()) {
    const clusterScoped = items.filter((p) => !p.resource.namespaced);
    const namespaced = items.filter((p) => p.resource.namespaced);
    await runPhase(ctx, clusterScoped, 'apply', applied);
    await runPhase(ctx, namespaced, 'apply', applied);
    applied.planned.push(...items);
    const later = waves.slice(i + 1).flatMap((w) => w.items);
    if (!gate || !later.length || later.every((p) => isCurrent(ctx.inventory, p))) continue;
    const waiting = await gate.afterWave(wave, items);
    if (waiting) return waiting;
  }
  return undefined;
}

/**
 * The ordered, dry-run-first apply of `applyStack` for any parsed objects and stamp (work orders
 * use it too, without a claim rule: an admin's order applies over whatever is there, but only
 * where its scope allows).
 */
export async function applyObjects(ctx: ApplyContext, docs: KubeObject[], stamper: Stamper, rules: ApplyRules = {}): Promise<AppliedStack> {
  const { claim, prepare } = rules;
  const applied: AppliedStack = { planned: [], uids: new Set(), namespaces: new Set(), changed: [] };
  const createdNamespaces: PlannedObject[] = [];
  const others = docs.filter((d) => !isCrd(d) && !isNamespace(d));
  const waveOf = wavesOf(others);
  try {
    const crds = await planObjects(ctx, docs.filter(isCrd), stamper, claim);
    const namespaces = await planObjects(ctx, docs.filter(isNamespace), stamper, claim);
    await runPhase(ctx, [...crds, ...namespaces], 'dry-run');
    await runPhase(ctx, crds, 'apply', applied);
    if (crds.length) await waitForCrds(ctx.objects, ctx.discovery, crds, ctx.crdEstablishedTimeoutMs);
    const fresh = namespaces.filter((n) => !n.existed);
    await runPhase(ctx, namespaces, 'apply', applied).finally(() => createdNamespaces.push(...fresh.filter((n) => n.existed)));
    const rest = await planObjects(ctx, others, stamper, claim);
    const clusterScoped = rest.filter((p) => !p.resource.namespaced);
    const namespaced = rest.filter((p) => p.resource.namespaced);
    await prepare?.(namespaced);
    await runPhase(ctx, [...clusterScoped, ...namespaced], 'dry-run');
    applied.planned = [...crds, ...namespaces];
    const waves = groupByWave(rest, (_p, i) => waveOf[i]!);
    const waiting = await applyWaves(ctx, waves, applied, rules.waves);
    if (waiting) return { ...applied, waiting };
    for (const p of namespaced) applied.namespaces.add(p.namespace!);
    for (const n of namespaces) applied.namespaces.add(n.object.metadata.name);
    return applied;
  } catch (err) {
    await rollbackNamespaces(ctx, createdNamespaces);
    throw err;
  }
}

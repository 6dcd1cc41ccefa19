import type { TargetStatePatch } from '@brokkr/contracts';
import type { HintType, AgentChannel } from '../agent-channel/channel.ts';
import { createDiagnosticsLoop } from '../diagnostics/start.ts';
import { createDrift, type Drift } from '../drift/start.ts';
import type { DiagnosticsLoop } from '../diagnostics/loop.ts';
import { HealthMonitor } from '../health/monitor.ts';
import { WindowGate } from '../maintenance/window-gate.ts';
import { createPreviewLoop } from '../previews/start.ts';
import type { PreviewLoop } from '../previews/loop.ts';
import { Reconciler } from '../reconcile/reconciler.ts';
import { createWebhookPoller } from '../webhooks/start.ts';
import type { WebhookPoller } from '../webhooks/poller.ts';
import { createWorkOrderLoop } from '../work-orders/start.ts';
import type { WorkOrderLoop } from '../work-orders/loop.ts';
import type { AgentClients } from './clients.ts';
import { Heartbeat } from './heartbeat.ts';
import { ReconcileLoop } from './reconcile-loop.ts';
import { TargetWatcher } from './target-watcher.ts';
import { AGENT_VERSION } from './version.ts';

/** The agent's loops; the optional ones are off by configuration. All but the heartbeat run only while the agent is ACTIVE. */
export interface AgentLoops {
  heartbeat: Heartbeat;
  watcher: TargetWatcher;
  reconcileLoop: ReconcileLoop;
  health: HealthMonitor | undefined;
  webhooks: WebhookPoller | undefined;
  workOrders: WorkOrderLoop | undefined;
  diagnostics: DiagnosticsLoop | undefined;
  previews: PreviewLoop;
  /** Drift detection (BROKKR__AGENT__DRIFT_ENABLED). */
  drift: Drift | undefined;
}

/** Builds the loops (not started) and wires what wakes them: status changes and the channel's hints. */
export function createLoops(c: AgentClients): AgentLoops {
  const heartbeat = createHeartbeat(c);
  const isActive = () => heartbeat.active;
  const wiring = { settings: c.settings, agentId: c.agent.id, registry: c.metrics.registry, logger: c.log, isActive };
  const health = c.settings.health.enabled ? createHealthMonitor(c, isActive) : undefined;
  const drift = c.settings.drift.enabled ? createAgentDrift(c, isActive) : undefined;
  const windows = new WindowGate({ grants: c.grants, events: c.events, logger: c.log });
  const reconciler = createReconciler(c, heartbeat, drift, windows);
  const reconcileLoop = new ReconcileLoop({ reconciler, events: c.events, health, logger: c.log, backoff: c.settings.backoff, isActive });
  c.trust?.attach((objects) => reconcileLoop.offer(objects));
  const loops: AgentLoops = {
    heartbeat,
    watcher: createTargetWatcher(c, reconcileLoop, isActive),
    reconcileLoop,
    health,
    webhooks: createWebhookPoller({ ...wiring, version: AGENT_VERSION }),
    workOrders: createWorkOrderLoop({
      ...wiring,
      // A maintenance window for the whole agent holds its work orders: none is claimed while it is shut.
      isActive: () => isActive() && windows.allows('work_orders'),
      objects: c.objects,
      discovery: c.discovery,
      metrics: c.metrics,
      trust: c.trust,
    }),
    diagnostics: c.settings.diagnostics.enabled
      ? createDiagnosticsLoop({ ...wiring, kube: c.kube, objects: c.objects, discovery: c.discovery })
      : undefined,
    previews: createPreviewLoop({ ...wiring, objects: c.objects, discovery: c.discovery, grants: c.grants }),
    drift,
  };
  windows.onTurn(() => {
    drift?.loop.policiesRefreshed();
    loops.reconcileLoop.poke();
    loops.workOrders?.poke();
  });
  heartbeat.onStatusChange(() => wakeOnStatusChange(loops));
  wakeOnHints(c.channel, loops);
  // Published trust metadata: the gate reads it now instead of at its next refresh.
  c.channel.on('trust-metadata', () => c.trust?.metadataChanged());
  return loops;
}

/** Starts every loop; each promise settles once `signal` aborts and the loop has finished. */
export function runLoops(loops: AgentLoops, signal: AbortSignal): Promise<void>[] {
  const { heartbeat, watcher, reconcileLoop, health, webhooks, workOrders, diagnostics, previews, drift } = loops;
  const running = [heartbeat, watcher, reconcileLoop, health, webhooks, workOrders, diagnostics, previews, drift];
  return running.flatMap((loop) => (loop ? [loop.run(signal)] : []));
}

function wakeOnStatusChange(loops: AgentLoops): void {
  loops.watcher.statusChanged();
  loops.reconcileLoop.poke();
  loops.webhooks?.poke();
  loops.workOrders?.poke();
  loops.diagnostics?.wake();
  loops.previews.wake();
}

function wakeOnHints(channel: AgentChannel, loops: AgentLoops): void {
  channel.on('hint', (type: HintType) => {
    if (type !== 'work_order') loops.watcher.hinted();
    // target_changed also covers work orders due again (retries, released claims).
    if (type !== 'stack_changed') loops.workOrders?.poke();
    // A new preview wakes its agents with a plain target_changed hint.
    if (type === 'target_changed') loops.previews.wake();
  });
  channel.on('patch', (patch: TargetStatePatch) => loops.watcher.patched(patch));
  // Up: stop holding a long-poll (hints take over); down: resume it at once.
  channel.on('state', (state: string) => {
    if (state === 'up') loops.watcher.stopHolding();
    loops.watcher.hinted();
  });
}

/** Heartbeats every polling interval; the events waiting for the broker go out with each. */
function createHeartbeat(c: AgentClients): Heartbeat {
  const deps = {
    ...{ broker: c.broker, kube: c.kube, metrics: c.metrics, logger: c.log, facts: c.clusterFacts },
    intervalMs: c.settings.pollingIntervalMs,
  };
  return new Heartbeat({ ...deps, afterBeat: () => c.events.flush() }, c.agent);
}

/** Drift detection: its sweep takes the resync interval (stacks are then no longer re-applied blindly). */
function createAgentDrift(c: AgentClients, isActive: () => boolean): Drift {
  const { settings } = c;
  return createDrift({
    kube: c.kube,
    objects: c.objects,
    broker: c.broker,
    metrics: c.metrics,
    logger: c.log,
    agentId: c.agent.id,
    watchNamespace: settings.watchNamespace,
    concurrency: settings.concurrency,
    debounceMs: settings.drift.debounceMs,
    sweepIntervalMs: settings.resyncIntervalMs,
    policies: c.grants,
    isActive,
  });
}

function createReconciler(c: AgentClients, heartbeat: Heartbeat, drift: Drift | undefined, windows: WindowGate): Reconciler {
  const { settings } = c;
  return new Reconciler({
    objects: c.objects,
    discovery: c.discovery,
    events: c.events,
    metrics: c.metrics,
    logger: c.log,
    agentId: c.agent.id,
    watchNamespace: settings.watchNamespace,
    concurrency: settings.concurrency,
    crdEstablishedTimeoutMs: settings.crdEstablishedTimeoutMs,
    waves: { timeoutMs: settings.waveHealthTimeoutMs, readinessGraceMs: settings.health.readinessGraceMs },
    adoptionEnabled: settings.adoptionEnabled,
    grants: c.grants,
    keepsVanished: (stack) => c.trust?.keepsVanished(stack) ?? false,
    tenantPodSecurity: settings.tenantPodSecurity,
    resyncIntervalMs: settings.resyncIntervalMs,
    resyncStacks: drift === undefined,
    drift: drift?.hooks,
    windows,
    backoff: settings.backoff,
    confirmActive: () =>
      heartbeat.refresh().then(
        (a) => a.status === 'ACTIVE',
        () => false,
      ),
  });
}

function createHealthMonitor(c: AgentClients, isActive: () => boolean): HealthMonitor {
  const { settings } = c;
  return new HealthMonitor({
    broker: c.broker,
    objects: c.objects,
    discovery: c.discovery,
    metrics: c.metrics,
    logger: c.log,
    agentId: c.agent.id,
    watchNamespace: settings.watchNamespace,
    checkIntervalMs: settings.health.checkIntervalMs,
    reportIntervalMs: settings.health.reportIntervalMs,
    readinessGraceMs: settings.health.readinessGraceMs,
    isActive,
  });
}

/** Keeps the desired state current and offers it to the reconcile loop; holds no long-poll while the channel is up. */
function createTargetWatcher(c: AgentClients, reconcileLoop: ReconcileLoop, isActive: () => boolean): TargetWatcher {
  const { settings, channel } = c;
  return new TargetWatcher({
    broker: c.broker,
    metrics: c.metrics,
    logger: c.log,
    agentId: c.agent.id,
    pollingIntervalMs: settings.pollingIntervalMs,
    channelResyncMs: settings.channelResyncMs,
    longPollWaitSeconds: settings.longPollWaitSeconds,
    signatures: c.trust !== undefined,
    isActive,
    longPollWanted: () => !channel.up,
    // With a trust policy, the gate checks the state first and offers what it admits (attached above).
    onState: (objects) => (c.trust ? c.trust.offer(objects) : reconcileLoop.offer(objects)),
    grants: c.grants,
  });
}

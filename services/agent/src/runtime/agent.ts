import type { Logger } from '@brokkr/logger';
import type { AgentSettings } from '../config.ts';
import { HealthMonitor } from '../health/monitor.ts';
import { LiveChannel } from '../live/channel.ts';
import { ChannelBrokerClient } from '../live/channel-broker.ts';
import { agentChannelUrl } from '../live/url.ts';
import { Discovery } from '../kube/discovery.ts';
import { KubeObjects } from '../kube/objects.ts';
import { createAgentMetrics } from '../metrics.ts';
import { EventReporter } from '../reconcile/event-reporter.ts';
import { Reconciler } from '../reconcile/reconciler.ts';
import { Heartbeat } from './heartbeat.ts';
import { startAgentHttpServer } from './http-server.ts';
import { ReconcileLoop } from './reconcile-loop.ts';
import { connectKubernetes, identify, waitForBroker } from './startup.ts';
import { TargetWatcher } from './target-watcher.ts';
import { WebhookPoller } from '../webhooks/poller.ts';
import { WorkOrderLoop } from '../work-orders/loop.ts';
import { startTelemetry } from '../telemetry/index.ts';
import { createDiagnosticsLoop } from '../diagnostics/start.ts';
import { createPreviewLoop } from '../previews/start.ts';

export interface RunningAgent {
  agentId: string;
  healthPort: number;
  /** The agent channel (WebSocket to the broker); `state` says whether it is up. */
  live: LiveChannel;
  /** Stops the loops (a pass in flight finishes its current stack, webhook POSTs and work orders in flight finish and report), then the server and clients. */
  stop(): Promise<void>;
}

const VERSION = '0.1.0';

/** Start-up (broker ready, PAK, agent record, Kubernetes), then the loops and the health server. */
export async function startAgent(settings: AgentSettings, logger: Logger): Promise<RunningAgent> {
  const broker = new ChannelBrokerClient(settings.brokerUrl, settings.pak);
  await waitForBroker(broker, settings.brokerReadyAttempts, logger);
  const agent = await identify(broker, settings.agentName, settings.clusterName);
  const { kube, version } = await connectKubernetes(settings.kubeconfig, settings.concurrency * 2);
  const log = logger.child({ agentId: agent.id });
  log.info({ kubernetes: version, server: kube.server, status: agent.status, watchNamespace: settings.watchNamespace }, 'agent identified');

  const metrics = createAgentMetrics();
  // Hints wake the loops below; heartbeats, events and health go up it while it is up (REST otherwise).
  const live = new LiveChannel({
    url: agentChannelUrl(settings.brokerUrl, settings.live.url),
    pak: settings.pak,
    userAgent: `brokkr-ts-agent/${VERSION}`,
    forceRest: settings.live.forceRest,
    logger: log.child({ loop: 'live' }),
  });
  broker.attach(live);
  const objects = new KubeObjects(kube);
  const discovery = new Discovery(kube, settings.concurrency);
  const events = new EventReporter(broker, agent.id, metrics, log);
  events.seed(await broker.listEvents(agent.id).catch((err: unknown) => (log.warn({ err }, 'could not read past events'), [])));

  // The heartbeat learns status changes; the loops built below react to them.
  const hooks = { statusChanged: () => undefined as void };
  let health: HealthMonitor | undefined;
  const heartbeat = new Heartbeat(
    {
      broker,
      kube,
      metrics,
      logger: log,
      intervalMs: settings.pollingIntervalMs,
      afterBeat: () => events.flush(),
      onStatusChange: () => hooks.statusChanged(),
    },
    agent,
  );
  const isActive = () => heartbeat.active;
  const reconciler = new Reconciler({
    objects,
    discovery,
    events,
    metrics,
    logger: log,
    agentId: agent.id,
    watchNamespace: settings.watchNamespace,
    concurrency: settings.concurrency,
    crdEstablishedTimeoutMs: settings.crdEstablishedTimeoutMs,
    adoptionEnabled: settings.adoptionEnabled,
    resyncIntervalMs: settings.resyncIntervalMs,
    backoff: settings.backoff,
    confirmActive: () =>
      heartbeat.refresh().then(
        (a) => a.status === 'ACTIVE',
        () => false,
      ),
  });
  if (settings.health.enabled) {
    health = new HealthMonitor({
      broker,
      objects,
      discovery,
      metrics,
      logger: log,
      agentId: agent.id,
      watchNamespace: settings.watchNamespace,
      checkIntervalMs: settings.health.checkIntervalMs,
      reportIntervalMs: settings.health.reportIntervalMs,
      readinessGraceMs: settings.health.readinessGraceMs,
      isActive,
    });
  }
  const reconcileLoop = new ReconcileLoop({ reconciler, events, health, logger: log, backoff: settings.backoff, isActive });
  const watcher = new TargetWatcher({
    broker,
    metrics,
    logger: log,
    agentId: agent.id,
    pollingIntervalMs: settings.pollingIntervalMs,
    channelResyncMs: settings.channelResyncMs,
    longPollWaitSeconds: settings.longPollWaitSeconds,
    isActive,
    longPollWanted: () => !live.up,
    onState: (o) => reconcileLoop.offer(o),
  });
  const webhooks =
    settings.webhookPollIntervalMs > 0
      ? new WebhookPoller({
          brokerUrl: settings.brokerUrl,
          pak: settings.pak,
          agentId: agent.id,
          intervalMs: settings.webhookPollIntervalMs,
          registry: metrics.registry,
          logger: log.child({ loop: 'webhooks' }),
          userAgent: `brokkr-agent/${VERSION}`,
          isActive,
        })
      : undefined;
  const workOrders =
    settings.workOrderConcurrency > 0
      ? new WorkOrderLoop({
          brokerUrl: settings.brokerUrl,
          pak: settings.pak,
          agentId: agent.id,
          concurrency: settings.workOrderConcurrency,
          pollingIntervalMs: settings.pollingIntervalMs,
          longPollWaitSeconds: settings.longPollWaitSeconds,
          // Work orders never prune: an empty inventory makes every object's ownership be read from the cluster.
          apply: {
            objects,
            discovery,
            metrics,
            logger: log.child({ loop: 'work-orders' }),
            agentId: agent.id,
            watchNamespace: settings.watchNamespace,
            concurrency: settings.concurrency,
            crdEstablishedTimeoutMs: settings.crdEstablishedTimeoutMs,
            inventory: { byStack: new Map(), byKey: new Map(), failures: [] },
          },
          registry: metrics.registry,
          logger: log.child({ loop: 'work-orders' }),
          isActive,
        })
      : undefined;
  const diagnostics = settings.diagnostics.enabled
    ? createDiagnosticsLoop({ settings, kube, objects, discovery, agentId: agent.id, registry: metrics.registry, logger: log, isActive })
    : undefined;
  const previews = createPreviewLoop({
    settings,
    objects,
    discovery,
    agentId: agent.id,
    registry: metrics.registry,
    logger: log,
    isActive,
  });
  hooks.statusChanged = () => {
    watcher.statusChanged();
    reconcileLoop.poke();
    webhooks?.poke();
    workOrders?.poke();
    diagnostics?.wake();
    previews.wake();
  };

  live.on('hint', (type: string) => {
    if (type !== 'work_order') watcher.hinted();
    // target_changed also covers work orders due again (retries, released claims).
    if (type !== 'stack_changed') workOrders?.poke();
    // A new preview wakes its agents with a plain target_changed hint.
    if (type === 'target_changed') previews.wake();
  });
  // Up: stop holding a long-poll (hints take over); down: resume it at once.
  live.on('state', (state: string) => {
    if (state === 'up') watcher.stopHolding();
    watcher.hinted();
  });

  let stopping = false;
  const server = await startAgentHttpServer({
    port: settings.healthPort,
    registry: metrics.registry,
    logger: log,
    version: VERSION,
    checks: {
      kubernetes: async () => void (await kube.version(3000)),
      broker: async () => {
        if (!(await broker.ready())) throw new Error('broker /readyz failed');
      },
    },
    status: () => ({
      brokerConnected: heartbeat.brokerConnected,
      lastHeartbeat: heartbeat.lastHeartbeatAt,
      agentStatus: heartbeat.agent.status,
    }),
    isShuttingDown: () => stopping,
  });

  const controller = new AbortController();
  const signal = controller.signal;
  const tasks = [
    heartbeat.run(signal),
    watcher.run(signal),
    reconcileLoop.run(signal),
    ...(health ? [health.run(signal)] : []),
    ...(webhooks ? [webhooks.run(signal)] : []),
    ...(workOrders ? [workOrders.run(signal)] : []),
    ...(diagnostics ? [diagnostics.run(signal)] : []),
    previews.run(signal),
  ];
  // Stack telemetry (Kubernetes Events, opted-in pod logs) over the live channel, whatever the agent's status;
  // it has no REST path, so nothing is streamed when the channel is off (WS_FORCE_REST).
  const telemetry = settings.live.forceRest
    ? undefined
    : await startTelemetry({
        kube,
        objects,
        discovery,
        live,
        agentId: agent.id,
        kubeconfig: settings.kubeconfig,
        watchNamespace: settings.watchNamespace,
        logger: log,
      }).catch((err: unknown) => void log.error({ err }, 'stack telemetry not started'));
  live.start();
  if (!heartbeat.active)
    log.warn({ status: agent.status }, 'the agent is not ACTIVE: only heartbeats are sent until an admin activates it');

  return {
    agentId: agent.id,
    healthPort: server.port,
    live,
    async stop() {
      stopping = true;
      controller.abort();
      await Promise.allSettled(tasks);
      await telemetry?.stop();
      await events.flush().catch(() => undefined);
      await live.stop();
      await server.close();
      await Promise.allSettled([broker.close(), kube.close()]);
    },
  };
}

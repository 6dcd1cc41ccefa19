import type { NatsConnection } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import { onStackInvalidation } from '../events/stack-invalidation.ts';
import type { AgentWakeups } from '../events/wakeups.ts';
import { StackFeed } from '../resources/cluster-events/live/stack-feed.ts';
import { recheckStackWatchers } from '../resources/cluster-events/live/stack-watchers.ts';
import { LineRateLimiter } from '../resources/cluster-events/rate-limit.ts';
import { StackAccess } from '../resources/cluster-events/stack-access.ts';
import { ClusterEventsWriter } from '../resources/cluster-events/writer.ts';
import { FleetFeed } from '../resources/fleet/fleet-feed.ts';
import { registerHeartbeatAgeGauge } from '../resources/fleet/heartbeat-age-metric.ts';
import type { LocalAgentConnections } from '../resources/fleet/presence.ts';

/**
 * This api process's cluster-event and fleet state: live subscribers, NATS subscriptions, caches,
 * the batch writer. It wires two resources' feeds (cluster-events/, fleet/) to the wake-ups and
 * stack invalidations of events/, so it lives here, above the resources (ADR 0037).
 */
export interface LiveState {
  stacks: StackFeed;
  fleet: FleetFeed;
  access: StackAccess;
  limiter: LineRateLimiter;
  writer: ClusterEventsWriter;
}

export interface LiveStateDeps {
  db: Queryable;
  nc: NatsConnection;
  /** This process's wake-up subscription (one per process: the feeds listen to it). */
  wakeups: Pick<AgentWakeups, 'onNotice'>;
  logger: Logger;
  registry: Registry;
  /** Where series labelled with agent names go (the metrics port only). */
  agentRegistry: Registry;
  /** The agent-channel registry of this process (ws_connected, connect/disconnect, live_subscribers). */
  agentConnections: LocalAgentConnections;
  /** Aborted at shutdown: timers stop, waiting frames are written (subscriptions end with the NATS drain). */
  signal: AbortSignal;
}

/** Built once per process by createContext (`ctx.liveFeeds`); starts its subscriptions and timers. */
export function createLiveState(deps: LiveStateDeps): LiveState {
  const { db, nc, logger, registry, agentConnections, signal } = deps;
  const stacks = new StackFeed(nc, logger);
  const fleet = new FleetFeed({ db, nc, wakeups: deps.wakeups, logger, registry, local: () => agentConnections, signal });
  const state: LiveState = {
    stacks,
    fleet,
    access: new StackAccess(db),
    limiter: new LineRateLimiter(),
    writer: new ClusterEventsWriter(db, stacks, logger),
  };
  fleet.start();
  registerHeartbeatAgeGauge(db, deps.agentRegistry, logger);
  agentConnections.liveSubscriberCount = () => stacks.subscriberCount;

  // A change to an agent's targets is always followed by its wake-up hint: re-read its stacks.
  deps.wakeups.onNotice((agentId) => state.access.forget(agentId));
  // An owner change or deletion closes the live sockets that may no longer watch the stack.
  const stopRechecks = onStackInvalidation(
    nc,
    logger,
    (stackId) =>
      void recheckStackWatchers(db, stacks, logger, stackId).catch((err: unknown) =>
        logger.warn({ err }, 'could not re-check live stack sockets'),
      ),
  );
  // Rate-limit gaps are told to the live subscribers when their window ends (never stored).
  const gaps = setInterval(() => {
    for (const gap of state.limiter.closedGaps()) {
      const [agentId, stackId] = JSON.parse(gap.key) as [string, string];
      stacks.publish({
        type: 'log_gap',
        body: { agent_id: agentId, stack_id: stackId, since_ts: gap.since.toISOString(), dropped_count: gap.dropped, reason: 'rate_limit' },
      });
    }
  }, 1000);
  gaps.unref();
  signal.addEventListener('abort', () => {
    clearInterval(gaps);
    stopRechecks();
    void state.writer.flush();
  });
  return state;
}

declare module '../context.ts' {
  interface ApiContext {
    /** Cluster events and the fleet view of this process: live subscribers, WebSocket presence, the cluster-event writer. */
    liveFeeds: LiveState;
  }
}

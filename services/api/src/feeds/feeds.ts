import type { NatsConnection } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import { onStackInvalidation } from '../events/stack-invalidation.ts';
import { StackFeed } from './stacks/stack-feed.ts';
import { recheckStackWatchers } from './stacks/stack-watchers.ts';
import { LineRateLimiter } from './stacks/rate-limit.ts';
import { StackAccess } from './stacks/stack-access.ts';
import { ClusterEventsWriter } from './stacks/writer.ts';
import { FleetFeed } from './fleet/fleet-feed.ts';
import { registerHeartbeatAgeGauge } from './fleet/heartbeat-age-metric.ts';
import type { LocalAgentConnections } from './fleet/presence.ts';

/**
 * This api process's feeds: what people watch live — a stack's cluster events and pod logs
 * (`/api/v1/stacks/{id}/live`, with the writer that stores them and the cache of which stacks an
 * agent may write to) and the fleet (`/api/v1/fleet/live`). The resources that serve them
 * (cluster-events/, fleet/) read this; the delivery tells the views about every agent notice
 * (pipeline.ts, stage 4); stack invalidations close the sockets that may no longer watch.
 */
export interface Feeds {
  stacks: StackFeed;
  fleet: FleetFeed;
  access: StackAccess;
  limiter: LineRateLimiter;
  writer: ClusterEventsWriter;
  /** What the delivery's fourth stage tells about every agent notice. */
  views: readonly { noticed(agentId: string): void }[];
}

export interface FeedsDeps {
  db: Queryable;
  nc: NatsConnection;
  logger: Logger;
  registry: Registry;
  /** Where series labelled with agent names go (the metrics port only). */
  agentRegistry: Registry;
  /** The agent sockets of this process (ws_connected, connect/disconnect, live_subscribers). */
  agentSockets: LocalAgentConnections;
  /** Aborted at shutdown: timers stop, waiting frames are written (subscriptions end with the NATS drain). */
  signal: AbortSignal;
}

/** Built once per process by createContext (`ctx.feeds`); starts its subscriptions and timers. */
export function createFeeds(deps: FeedsDeps): Feeds {
  const { db, nc, logger, registry, agentSockets, signal } = deps;
  const stacks = new StackFeed(nc, logger);
  const fleet = new FleetFeed({ db, nc, logger, registry, local: () => agentSockets, signal });
  const access = new StackAccess(db);
  const state: Feeds = {
    stacks,
    fleet,
    access,
    limiter: new LineRateLimiter(),
    writer: new ClusterEventsWriter(db, stacks, logger),
    // A change to an agent's targets is always followed by its notice: re-read its stacks.
    views: [fleet, access],
  };
  fleet.start();
  registerHeartbeatAgeGauge(db, deps.agentRegistry, logger);
  agentSockets.liveSubscriberCount = () => stacks.subscriberCount;
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

import { SUBJECTS } from '@brokkr/bus';
import type { ApiContext } from '../../context.ts';
import { FleetFeed } from '../fleet/fleet-feed.ts';
import { registerHeartbeatAgeGauge } from '../fleet/heartbeat-age-metric.ts';
import type { LocalAgentConnections } from '../fleet/presence.ts';
import { StackFeed } from './live/stack-feed.ts';
import { LineRateLimiter } from './rate-limit.ts';
import { StackAccess } from './stack-access.ts';
import { TelemetryWriter } from './writer.ts';

/** This api process's telemetry and fleet state: live subscribers, NATS subscriptions, caches, the batch writer. */
export interface LiveState {
  stacks: StackFeed;
  fleet: FleetFeed;
  access: StackAccess;
  limiter: LineRateLimiter;
  writer: TelemetryWriter;
}

// Keyed by the process's one ApiContext (so nothing here is module-global state): built by
// startLiveState at start-up, or on first use where a test builds the app without it.
const states = new WeakMap<ApiContext, LiveState>();

/** The agent-channel registry, when the agent channel put one on the context. */
const agentConnections = (ctx: ApiContext) => (ctx as { agentConnections?: LocalAgentConnections }).agentConnections;

export function liveState(ctx: ApiContext): LiveState {
  return states.get(ctx) ?? startLiveState(ctx);
}

/** Creates the state and its background work (stopped by ctx.shutdownSignal; subscriptions end with the NATS drain). */
export function startLiveState(ctx: ApiContext): LiveState {
  const existing = states.get(ctx);
  if (existing) return existing;
  const { nc } = ctx.bus;
  const stacks = new StackFeed(nc, ctx.logger);
  const fleet = new FleetFeed({
    db: ctx.db.pool,
    nc,
    logger: ctx.logger,
    registry: ctx.metrics.registry,
    local: () => agentConnections(ctx),
    signal: ctx.shutdownSignal,
  });
  const state: LiveState = {
    stacks,
    fleet,
    access: new StackAccess(ctx.db.pool),
    limiter: new LineRateLimiter(),
    writer: new TelemetryWriter(ctx.db.pool, stacks, ctx.logger),
  };
  states.set(ctx, state);
  fleet.start();
  registerHeartbeatAgeGauge(ctx.db.pool, ctx.metrics.registry, ctx.logger);
  const connections = agentConnections(ctx);
  if (connections) connections.liveSubscriberCount = () => stacks.subscriberCount;

  // A change to an agent's targets is always followed by its wake-up hint: re-read its stacks.
  nc.subscribe(SUBJECTS.notifyAgentAll, {
    callback: (err, msg) => {
      if (!err) state.access.forget(msg.subject.slice(SUBJECTS.notifyAgentAll.length - 1));
    },
  });
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
  ctx.shutdownSignal.addEventListener('abort', () => {
    clearInterval(gaps);
    void state.writer.flush();
  });
  return state;
}

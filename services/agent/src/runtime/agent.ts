import type { Logger } from '@brokkr/logger';
import type { AgentSettings } from '../config.ts';
import type { AgentChannel } from '../agent-channel/channel.ts';
import { startClusterEvents, type RunningClusterEvents } from '../cluster-events/index.ts';
import { connectClients, type AgentClients } from './clients.ts';
import type { Heartbeat } from './heartbeat.ts';
import { startAgentHttpServer, type AgentHttpServer } from './http-server.ts';
import { createLoops, runLoops } from './loops.ts';
import { AGENT_VERSION } from './version.ts';

export interface RunningAgent {
  agentId: string;
  healthPort: number;
  /** The agent channel (WebSocket to the broker); `state` says whether it is up. */
  channel: AgentChannel;
  /** Stops the loops (a pass in flight finishes its current stack, webhook POSTs and work orders in flight finish and report), then the server and clients. */
  stop(): Promise<void>;
}

/** Start-up (broker ready, PAK, agent record, Kubernetes), then the loops, the health server and cluster events. */
export async function startAgent(settings: AgentSettings, logger: Logger): Promise<RunningAgent> {
  const clients = await connectClients(settings, logger);
  const loops = createLoops(clients);
  const stopping = new AbortController();
  const server = await startHealthServer(clients, loops.heartbeat, stopping.signal);
  const tasks = [...runLoops(loops, stopping.signal), ...(clients.trust ? [clients.trust.run(stopping.signal)] : [])];
  const clusterEvents = await startStackClusterEvents(clients);
  clients.channel.start();
  if (!loops.heartbeat.active)
    clients.log.warn({ status: clients.agent.status }, 'the agent is not ACTIVE: only heartbeats are sent until an admin activates it');
  return {
    agentId: clients.agent.id,
    healthPort: server.port,
    channel: clients.channel,
    async stop() {
      stopping.abort();
      await Promise.allSettled(tasks);
      await shutDown(clients, clusterEvents, server);
    },
  };
}

/** /healthz, /readyz (Kubernetes and the broker reachable, not shutting down) and /metrics. */
function startHealthServer(c: AgentClients, heartbeat: Heartbeat, stopping: AbortSignal): Promise<AgentHttpServer> {
  return startAgentHttpServer({
    port: c.settings.healthPort,
    registry: c.metrics.registry,
    logger: c.log,
    version: AGENT_VERSION,
    checks: {
      kubernetes: async () => void (await c.kube.version(3000)),
      broker: async () => {
        if (!(await c.broker.ready())) throw new Error('broker /readyz failed');
      },
    },
    status: () => ({
      brokerConnected: heartbeat.brokerConnected,
      lastHeartbeat: heartbeat.lastHeartbeatAt,
      agentStatus: heartbeat.agent.status,
    }),
    isShuttingDown: () => stopping.aborted,
  });
}

/**
 * Cluster events (Kubernetes Events, opted-in pod logs) over the live channel, whatever the agent's status;
 * it has no REST path, so nothing is streamed when the channel is off (WS_FORCE_REST).
 */
async function startStackClusterEvents(c: AgentClients): Promise<RunningClusterEvents | undefined> {
  if (c.settings.channel.forceRest) return undefined;
  const { kube, objects, discovery, channel, log, settings } = c;
  const options = { kube, objects, discovery, channel, agentId: c.agent.id, grants: c.grants, logger: log };
  return startClusterEvents({ ...options, kubeconfig: settings.kubeconfig, watchNamespace: settings.watchNamespace }).catch(
    (err: unknown) => void log.error({ err }, 'cluster events not started'),
  );
}

/** After the loops: cluster events, the last events, the channel, the health server, then the connections. */
async function shutDown(c: AgentClients, clusterEvents: RunningClusterEvents | undefined, server: AgentHttpServer): Promise<void> {
  await clusterEvents?.stop();
  await c.events.flush().catch(() => undefined);
  await c.channel.stop();
  await server.close();
  await Promise.allSettled([c.broker.close(), c.kube.close()]);
}

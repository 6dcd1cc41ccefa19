import { NIL_UUID, type AgentEventFrameBody, type AgentHealthFrameBody, type HeartbeatFrameBody } from '@brokkr/contracts';
import { BrokerClient } from '../broker/client.ts';
import type { AgentEventBody, HealthRecord, HeartbeatBody } from '../broker/types.ts';
import type { AgentChannel } from './channel.ts';

/**
 * The broker client with the agent channel in front of its three uplinks: heartbeats, events and
 * health go as frames while the channel is up and its control lane takes them (Brokkr's frame
 * shapes: nil ids, the agent's own timestamps), otherwise over REST exactly as before. Everything
 * else (target state, the agent record, work orders, webhooks) is always REST.
 */
export class ChannelBrokerClient extends BrokerClient {
  private channel: AgentChannel | undefined;

  /** From now on uplinks try the channel first. */
  attach(channel: AgentChannel): void {
    this.channel = channel;
  }

  override async heartbeat(agentId: string, body: HeartbeatBody): Promise<void> {
    // Cluster facts (rare: when they change) go over REST, which Brokkr's broker ignores if it cannot read them.
    if (body.facts) return super.heartbeat(agentId, body);
    const frame: HeartbeatFrameBody = {
      agent_id: agentId,
      sent_at: new Date().toISOString(),
      k8s_reachable: body.k8s_reachable ?? null,
      k8s_api_latency_ms: body.k8s_api_latency_ms ?? null,
    };
    if (this.channel?.sendControl({ type: 'heartbeat', body: frame })) return;
    await super.heartbeat(agentId, body);
  }

  override async postEvent(agentId: string, body: AgentEventBody): Promise<void> {
    const now = new Date().toISOString();
    const frame: AgentEventFrameBody = { id: NIL_UUID, created_at: now, updated_at: now, deleted_at: null, ...body, agent_id: agentId };
    if (this.channel?.sendControl({ type: 'agent_event', body: frame })) return;
    await super.postEvent(agentId, body);
  }

  /** One frame per object; if any of them is refused the whole batch goes over REST (as Brokkr's agent does). */
  override async reportHealth(agentId: string, records: HealthRecord[]): Promise<void> {
    const channel = this.channel;
    const now = new Date().toISOString();
    const frameOf = (r: HealthRecord): AgentHealthFrameBody => ({
      id: NIL_UUID,
      agent_id: agentId,
      deployment_object_id: r.id,
      status: r.status,
      summary: JSON.stringify(r.summary),
      checked_at: r.checked_at,
      created_at: now,
      updated_at: now,
    });
    const viaChannel = channel?.up === true && records.every((r) => channel.sendControl({ type: 'agent_health', body: frameOf(r) }));
    if (!viaChannel) await super.reportHealth(agentId, records);
  }
}

import { z } from 'zod';
import { agentEventSchema } from '@brokkr/contracts';
import { timestamp, uuid } from '../../http/schemas.ts';

/** Brokkr's FleetAgentRecord: all 17 keys always present. REST and `fleet_update` alike. */
export const fleetAgentRecordSchema = z
  .object({
    agent_id: uuid(),
    name: z.string(),
    cluster_name: z.string(),
    status: z.string(),
    ws_connected: z.boolean().describe('The agent holds a live-channel WebSocket on some api replica'),
    connected_since: timestamp().nullable(),
    last_heartbeat: timestamp().nullable(),
    heartbeat_age_seconds: z.number().int().nullable(),
    pending_object_count: z.number().int(),
    pending_work_orders: z.number().int(),
    claimed_work_orders: z.number().int(),
    last_event_at: timestamp().nullable(),
    seconds_since_last_event: z.number().int().nullable(),
    health_failing: z.number().int(),
    health_degraded: z.number().int(),
    k8s_reachable: z.boolean().nullable(),
    k8s_api_latency_ms: z.number().int().nullable(),
  })
  .meta({ id: 'FleetAgentRecord' });
export type FleetAgentRecord = z.output<typeof fleetAgentRecordSchema>;

export const fleetStatusSchema = z
  .object({ record: fleetAgentRecordSchema, recent_events: agentEventSchema.array() })
  .meta({ id: 'FleetStatusResponse' });

export const fleetQuerySchema = z.object({
  pak_id: uuid().optional().describe('Only agents registered with this generator (tenant); an unknown id gives []'),
});

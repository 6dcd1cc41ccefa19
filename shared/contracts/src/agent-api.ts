import { z } from 'zod';
import { int32, softDeletableRow, timestamp, uuid } from './wire.ts';

/**
 * The v1 API shapes an agent reads and writes (Brokkr's, snake_case as on the wire). The api
 * serves and validates with these schemas (their `meta` ids name them in the OpenAPI document);
 * the agent types its requests and responses with them.
 */

export const authPayloadSchema = z
  .object({ admin: z.boolean(), agent: z.guid().nullable(), generator: z.guid().nullable(), readonly: z.boolean() })
  .meta({ id: 'AuthPayload' });
export type AuthPayload = z.output<typeof authPayloadSchema>;

/** Brokkr's Agent JSON (pak_hash is never serialized). */
export const agentSchema = z
  .object({
    ...softDeletableRow(),
    name: z.string(),
    cluster_name: z.string(),
    last_heartbeat: timestamp().nullable(),
    status: z.string().meta({ description: '`ACTIVE` or `INACTIVE`; the agent only works while ACTIVE' }),
    k8s_reachable: z.boolean().nullable(),
    k8s_api_latency_ms: z.number().int().nullable(),
    k8s_reported_at: timestamp().nullable(),
  })
  .meta({ id: 'Agent' });
export type Agent = z.output<typeof agentSchema>;

export const deploymentObjectSchema = z
  .object({
    ...softDeletableRow(),
    sequence_id: z.number().int(),
    stack_id: uuid(),
    yaml_content: z.string(),
    yaml_checksum: z.string(),
    submitted_at: timestamp(),
    is_deletion_marker: z.boolean(),
  })
  .meta({ id: 'DeploymentObject' });
export type DeploymentObject = z.output<typeof deploymentObjectSchema>;

export const agentEventSchema = z
  .object({
    ...softDeletableRow(),
    agent_id: uuid(),
    deployment_object_id: uuid(),
    event_type: z.string(),
    status: z.string(),
    message: z.string().nullable(),
  })
  .meta({ id: 'AgentEvent' });
export type AgentEvent = z.output<typeof agentEventSchema>;

/** No status validation (Brokkr's agent sends `DEPLOY` and `SUCCESS`/`FAILURE`); lengths are the columns'. */
export const newAgentEventSchema = z
  .object({
    agent_id: uuid(),
    deployment_object_id: uuid(),
    event_type: z.string().meta({ maxLength: 50 }),
    status: z.string().meta({ maxLength: 10 }),
    message: z.string().nullish(),
  })
  .meta({ id: 'NewAgentEvent' });
export type NewAgentEvent = z.input<typeof newAgentEventSchema>;

/**
 * What an agent reports about its cluster (ours, not Brokkr's): what a chart is rendered against
 * (`.Capabilities.KubeVersion`, `.Capabilities.APIVersions`) and what `{{ agent.facts.<name> }}`
 * reads. Bounded: it is stored per agent.
 */
export const clusterFactsSchema = z
  .strictObject({
    kubernetes_version: z
      .string()
      .max(64)
      .regex(/^v\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]*)?$/),
    api_versions: z
      .array(
        z
          .string()
          .max(253)
          .regex(/^[a-z0-9.-]+(\/[a-z0-9]+)?$/),
      )
      .max(2000),
  })
  .meta({ id: 'ClusterFacts' });
export type ClusterFacts = z.output<typeof clusterFactsSchema>;

/** The facts of a heartbeat, or undefined when they do not parse (they are ignored; the heartbeat is not). */
export function readClusterFacts(value: unknown): ClusterFacts | undefined {
  const parsed = clusterFactsSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The heartbeat's optional body; anything unparsable is ignored as in Brokkr. `facts` is sent
 * when they change; they are read on their own (readClusterFacts), so facts that do not parse
 * are ignored and the rest of the heartbeat is not.
 */
export const heartbeatSchema = z
  .object({
    k8s_reachable: z.boolean().nullish(),
    k8s_api_latency_ms: int32().nullish(),
    facts: clusterFactsSchema.optional(),
  })
  .meta({ id: 'AgentHeartbeat' });
export type Heartbeat = z.input<typeof heartbeatSchema>;

export const HEALTH_STATUSES = ['healthy', 'degraded', 'failing', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const resourceHealthSchema = z
  .object({ kind: z.string(), name: z.string(), namespace: z.string(), ready: z.boolean(), message: z.string().nullable().optional() })
  .meta({ id: 'ResourceHealth' });
export type ResourceHealth = z.output<typeof resourceHealthSchema>;

export const healthSummarySchema = z
  .object({
    pods_ready: int32(),
    pods_total: int32(),
    conditions: z.array(z.string()),
    resources: z.array(resourceHealthSchema).nullable().optional(),
  })
  .meta({ id: 'HealthSummary' });
export type HealthSummary = z.output<typeof healthSummarySchema>;

/**
 * `status` is any string on purpose: an unknown value must reject the whole batch with 422
 * `invalid_health_record` (Brokkr's code), not the generic body-validation error.
 */
export const healthUpdateSchema = z
  .object({
    deployment_objects: z.array(
      z
        .object({
          id: uuid(),
          status: z.string(),
          summary: healthSummarySchema.nullable().optional(),
          checked_at: z.iso.datetime({ offset: true }),
        })
        .meta({ id: 'DeploymentObjectHealthUpdate' }),
    ),
  })
  .meta({ id: 'HealthStatusUpdate' });
export type HealthUpdate = z.output<typeof healthUpdateSchema>;

const webhookHeadersSchema = z
  .object({
    'webhook-id': z.string().meta({ description: 'The event id, stable across retries' }),
    'webhook-timestamp': z.string().meta({ description: 'Seconds since the epoch, at claim time' }),
    'webhook-signature': z
      .string()
      .optional()
      .meta({ description: '`v1,<base64 HMAC-SHA256>` per active secret; absent when the subscription has none' }),
  })
  .meta({ description: 'Standard Webhooks headers computed by the broker at claim time; the agent sends them unchanged' });

/**
 * Our extension of Brokkr's PendingWebhookDelivery (extra fields are wire-compatible: Brokkr's
 * agent ignores them). The api signs, so the signing secret never leaves the hub; Brokkr's
 * broker sends no `webhook_headers`, and its deliveries then go out unsigned.
 */
export const pendingDeliverySchema = z
  .object({
    id: uuid(),
    subscription_id: uuid(),
    event_type: z.string(),
    /** The JSON body to send, verbatim. */
    payload: z.string(),
    url: z.string(),
    auth_header: z.string().nullable(),
    timeout_seconds: z.number().int(),
    max_retries: z.number().int(),
    attempts: z.number().int(),
    webhook_headers: webhookHeadersSchema,
  })
  .meta({ id: 'PendingWebhookDelivery' });
export type PendingWebhookDelivery = Omit<z.output<typeof pendingDeliverySchema>, 'webhook_headers'> & {
  webhook_headers?: Record<string, string>;
};

/** `POST /webhook-deliveries/{id}/result`; absent fields are omitted, as Brokkr's agent does. */
export const deliveryResultBodySchema = z
  .object({
    success: z.boolean(),
    status_code: z.number().int().nullish(),
    error: z.string().nullish(),
    duration_ms: z.number().int().nullish(),
  })
  .meta({ id: 'DeliveryResultRequest' });
export type DeliveryReport = z.input<typeof deliveryResultBodySchema>;

import type { AnyRoute } from '../http/route.ts';
import { webhookDeliveryRoutes } from './webhook-deliveries.ts';
import { webhookAgentRoutes } from './webhooks-agent.ts';
import { webhookCrudRoutes } from './webhooks-crud.ts';
import { webhookOpsRoutes } from './webhooks-ops.ts';

/**
 * Webhook subscriptions (contract §2.8), their deliveries, and agent-delivered webhooks (§5.6).
 * `/webhooks/event-types` is listed before `/webhooks/:id` so express does not take it for an id.
 */
export const webhookRoutes: AnyRoute[] = [...webhookOpsRoutes, ...webhookCrudRoutes, ...webhookDeliveryRoutes, ...webhookAgentRoutes];

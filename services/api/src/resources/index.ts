import type { AnyRoute } from '../http/route.ts';
import { liveAdminRoutes } from '../agent-channel/admin-routes.ts';
import { adminConfigRoutes } from './admin/routes.ts';
import { adminRotatePakRoutes } from './admin/rotate-pak-routes.ts';
import { agentEventRoutes } from './agent-events/routes.ts';
import { agentHeartbeatRoutes } from './agents/heartbeat-routes.ts';
import { agentMetadataRoutes } from './agents/metadata-routes.ts';
import { agentRoutes } from './agents/routes.ts';
import { agentTargetRoutes } from './agents/target-routes.ts';
import { auditLogRoutes } from './audit-logs/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { clusterEventRoutes } from './cluster-events/routes.ts';
import { deploymentObjectRoutes } from './deployment-objects/routes.ts';
import { diagnosticAgentRoutes } from './diagnostics/agent-routes.ts';
import { diagnosticRoutes } from './diagnostics/routes.ts';
import { driftAgentRoutes } from './drift/agent-routes.ts';
import { driftPolicyRoutes } from './drift/policy-routes.ts';
import { driftRoutes } from './drift/routes.ts';
import { fleetRoutes } from './fleet/routes.ts';
import { grantRoutes } from './generators/grant-routes.ts';
import { registrationRequestRoutes } from './generators/registration-request-routes.ts';
import { generatorRegistrationRoutes } from './generators/registration-routes.ts';
import { generatorRoutes } from './generators/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { maintenanceBypassRoutes } from './maintenance-windows/bypass-routes.ts';
import { maintenanceWindowRoutes } from './maintenance-windows/routes.ts';
import { explainRoutes } from './overrides/explain-routes.ts';
import { overrideRoutes } from './overrides/routes.ts';
import { pakRoutes } from './paks/routes.ts';
import { previewAgentRoutes } from './previews/agent-routes.ts';
import { previewRoutes } from './previews/routes.ts';
import { rolloutPolicyRoutes } from './rollouts/policy-routes.ts';
import { rolloutRoutes } from './rollouts/routes.ts';
import { rolloutApprovalRoutes } from './rollouts/approval-routes.ts';
import { renderInputsRoutes } from './render-inputs/routes.ts';
import { signatureRoutes } from './signatures/routes.ts';
import { stackDependencyRoutes } from './stack-dependencies/routes.ts';
import { stackAgentStatusRoutes } from './stack-dependencies/status-routes.ts';
import { stackExpiryRoutes } from './stacks/expiry-routes.ts';
import { stackMetadataRoutes } from './stacks/metadata-routes.ts';
import { stackRoutes } from './stacks/routes.ts';
import { targetStateRoutes } from './target-state/routes.ts';
import { deploymentObjectFromTemplateRoutes } from './templates/from-template-routes.ts';
import { templateMetadataRoutes } from './templates/metadata-routes.ts';
import { templateRoutes } from './templates/routes.ts';
import { webhookAgentRoutes } from './webhook-deliveries/agent-routes.ts';
import { webhookDeliveryRoutes } from './webhook-deliveries/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { webhookTestRoutes } from './webhooks/test-routes.ts';
import { workOrderAgentRoutes } from './work-orders/agent-routes.ts';
import { workOrderRoutes } from './work-orders/routes.ts';

/**
 * Every /api/v1 route of the service, grouped by resource folder. A route module exports an
 * `AnyRoute[]`; add it here (one import, one spread). Order only matters between paths express
 * could confuse (`/webhooks/event-types` before `/webhooks/:id`, inside webhookRoutes).
 */
export const allRoutes: readonly AnyRoute[] = [
  ...authRoutes,
  ...agentRoutes,
  ...agentMetadataRoutes,
  ...agentTargetRoutes,
  ...agentHeartbeatRoutes,
  ...agentEventRoutes,
  ...targetStateRoutes,
  ...generatorRoutes,
  ...generatorRegistrationRoutes,
  ...grantRoutes,
  ...registrationRequestRoutes,
  ...pakRoutes,
  ...overrideRoutes,
  ...explainRoutes,
  ...auditLogRoutes,
  ...adminConfigRoutes,
  ...liveAdminRoutes,
  ...adminRotatePakRoutes,
  ...stackRoutes,
  ...stackMetadataRoutes,
  ...stackExpiryRoutes,
  ...stackDependencyRoutes,
  ...stackAgentStatusRoutes,
  ...rolloutPolicyRoutes,
  ...rolloutRoutes,
  ...rolloutApprovalRoutes,
  ...deploymentObjectRoutes,
  ...signatureRoutes,
  ...renderInputsRoutes,
  ...deploymentObjectFromTemplateRoutes,
  ...templateRoutes,
  ...templateMetadataRoutes,
  ...webhookRoutes,
  ...webhookTestRoutes,
  ...webhookDeliveryRoutes,
  ...webhookAgentRoutes,
  ...healthRoutes,
  ...clusterEventRoutes,
  ...fleetRoutes,
  ...workOrderRoutes,
  ...workOrderAgentRoutes,
  ...diagnosticRoutes,
  ...diagnosticAgentRoutes,
  ...previewRoutes,
  ...previewAgentRoutes,
  ...driftPolicyRoutes,
  ...driftRoutes,
  ...driftAgentRoutes,
  ...maintenanceWindowRoutes,
  ...maintenanceBypassRoutes,
];

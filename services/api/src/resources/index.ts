import type { AnyRoute } from '../http/route.ts';
import { agentRoutes } from '../routes/agents.ts';
import { healthRoutes } from '../routes/health.ts';
import { stackRoutes } from '../routes/stacks.ts';
import { webhookRoutes } from '../routes/webhooks.ts';
import { adminConfigRoutes } from './admin/routes.ts';
import { auditLogRoutes } from './audit-logs/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { generatorRegistrationRoutes } from './generators/registration-routes.ts';
import { generatorRoutes } from './generators/routes.ts';
import { pakRoutes } from './paks/routes.ts';

/**
 * Every /api/v1 route of the service. A route module exports an `AnyRoute[]`; add it here
 * (one import, one spread). Order only matters between paths express could confuse.
 */
export const allRoutes: readonly AnyRoute[] = [...authRoutes, ...agentRoutes, ...generatorRoutes, ...generatorRegistrationRoutes, ...pakRoutes, ...auditLogRoutes, ...adminConfigRoutes, ...stackRoutes, ...webhookRoutes, ...healthRoutes];

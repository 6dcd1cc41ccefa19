import type { AnyRoute } from '../http/route.ts';
import { adminConfigRoutes } from './admin-config.ts';
import { agentRoutes } from './agents.ts';
import { auditLogRoutes } from './audit-logs.ts';
import { authRoutes } from './auth.ts';
import { generatorRegistrationRoutes } from './generator-registrations.ts';
import { generatorRoutes } from './generators.ts';
import { healthRoutes } from './health.ts';
import { pakRoutes } from './paks.ts';
import { stackRoutes } from './stacks.ts';
import { webhookRoutes } from './webhooks.ts';

/**
 * Every /api/v1 route of the service. A route module exports an `AnyRoute[]`; add it here
 * (one import, one spread). Order only matters between paths express could confuse.
 */
export const allRoutes: readonly AnyRoute[] = [...authRoutes, ...agentRoutes, ...generatorRoutes, ...generatorRegistrationRoutes, ...pakRoutes, ...auditLogRoutes, ...adminConfigRoutes, ...stackRoutes, ...webhookRoutes, ...healthRoutes];

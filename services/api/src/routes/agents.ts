import type { AnyRoute } from '../http/route.ts';
import { agentEventRoutes } from './agent-events.ts';
import { agentActivityRoutes } from './agents-activity.ts';
import { agentCrudRoutes } from './agents-crud.ts';
import { agentMetadataRoutes } from './agents-metadata.ts';
import { agentTargetRoutes } from './agents-targets.ts';
import { targetStateRoutes } from './target-state.ts';

/** Every /agents and /agent-events route (contract §2.2, §2.3) and the target state (§3.4). */
export const agentRoutes: AnyRoute[] = [
  ...agentCrudRoutes,
  ...agentMetadataRoutes,
  ...agentTargetRoutes,
  ...agentActivityRoutes,
  ...targetStateRoutes,
  ...agentEventRoutes,
];

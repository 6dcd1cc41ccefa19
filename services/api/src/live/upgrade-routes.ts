import { telemetryLiveRoutes } from '../resources/cluster-events/live-routes.ts';
import { agentChannelRoutes } from './agent-channel/route.ts';
import type { UpgradeRoute } from '../http/upgrade-route.ts';

/** Every WebSocket endpoint of the api: one import and one spread per module. */
export const allUpgradeRoutes: UpgradeRoute[] = [...agentChannelRoutes, ...telemetryLiveRoutes];

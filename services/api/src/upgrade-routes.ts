import type { UpgradeRoute } from './http/upgrade-route.ts';
import { clusterEventLiveRoutes } from './resources/cluster-events/live-routes.ts';
import { fleetLiveRoutes } from './resources/fleet/live-route.ts';
import { agentChannelRoutes } from './agent-channel/route.ts';

/** Every WebSocket endpoint of the api: one import and one spread per module. */
export const allUpgradeRoutes: UpgradeRoute[] = [...agentChannelRoutes, ...clusterEventLiveRoutes, ...fleetLiveRoutes];

import { LISTENER_MAX_MESSAGE_BYTES, type UpgradeRoute } from '../../http/upgrade-route.ts';

/**
 * `/api/v1/fleet/live`: a `fleet_update` (one full FleetAgentRecord) whenever an agent's record may
 * have changed (fleet-feed.ts), from every replica. Admin only (403 otherwise); no snapshot, pull
 * GET /fleet first. Closed when the PAK stops being valid.
 */
export const fleetLiveRoutes: UpgradeRoute[] = [
  {
    path: '/api/v1/fleet/live',
    subprotocolAuth: true,
    maxMessageBytes: () => LISTENER_MAX_MESSAGE_BYTES,
    async handle(up) {
      if (!up.identity.admin) return up.reject(403);
      const { fleet } = up.ctx.feeds;
      try {
        fleet.add(await up.accept());
      } catch (err) {
        up.ctx.logger.debug({ err }, 'fleet subscription not completed');
      }
    },
  },
];

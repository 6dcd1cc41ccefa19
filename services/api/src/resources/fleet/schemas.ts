import { z } from 'zod';
import { agentEventSchema, fleetAgentRecordSchema } from '@brokkr/contracts';
import { uuid } from '../../http/schemas.ts';

/** The record itself is @brokkr/contracts' (the console and the fleet feed read it too). */
export { fleetAgentRecordSchema };

export const fleetStatusSchema = z
  .object({ record: fleetAgentRecordSchema, recent_events: agentEventSchema.array() })
  .meta({ id: 'FleetStatusResponse' });

export const fleetQuerySchema = z.object({
  pak_id: uuid().optional().describe('Only agents registered with this generator (tenant); an unknown id gives []'),
});

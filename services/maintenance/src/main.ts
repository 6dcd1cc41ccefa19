import { maintenanceConfigSchema } from '@brokkr/config';
import { runHubService } from '@brokkr/runtime';

await runHubService({
  name: 'maintenance',
  schema: maintenanceConfigSchema,
  async start() {
    // Domain work is added by its own issue; the service already connects, serves health and drains.
    return { stop: async () => undefined };
  },
});

import { maintenanceConfigSchema } from '@brokkr/config';
import { runHubService } from '@brokkr/runtime';
import { startMaintenance } from './maintenance.ts';

await runHubService({
  name: 'maintenance',
  schema: maintenanceConfigSchema,
  start: (ctx) => startMaintenance(ctx),
});

import { webhookDispatcherConfigSchema } from '@brokkr/config';
import { runHubService } from '@brokkr/runtime';

await runHubService({
  name: 'webhook-dispatcher',
  schema: webhookDispatcherConfigSchema,
  async start() {
    // Domain work is added by its own issue; the service already connects, serves health and drains.
    return { stop: async () => undefined };
  },
});

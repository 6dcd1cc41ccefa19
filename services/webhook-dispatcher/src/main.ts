import { webhookDispatcherConfigSchema } from '@brokkr/config';
import { runHubService } from '@brokkr/runtime';
import { startDispatcher } from './dispatcher.ts';

await runHubService({
  name: 'webhook-dispatcher',
  schema: webhookDispatcherConfigSchema,
  start: (ctx) => startDispatcher(ctx),
});

/**
 * The in-cluster agent: `node services/agent/src/main.ts` (or dist/main.js). Exit codes: 0 after
 * a clean SIGTERM/SIGINT shutdown, 1 on bad configuration, a rejected PAK, an unknown agent or an
 * unreachable Kubernetes API at start-up. The process's life (config, logger, crash handlers,
 * signals, shutdown deadline) is @brokkr/runtime's, the same as every hub service's.
 */
import { runService } from '@brokkr/runtime';
import { loadSettings } from './config.ts';
import { startAgent } from './runtime/agent.ts';
import { StartupError } from './runtime/startup.ts';

await runService({
  name: 'agent',
  loadConfig: loadSettings,
  log: (settings) => settings.log,
  start: (settings, logger) => startAgent(settings, logger),
  isOperatorError: (err) => err instanceof StartupError,
});

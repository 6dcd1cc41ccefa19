/**
 * The api process: `node services/api/src/main.ts` (or dist/main.js). Its life (settings read once,
 * one logger, crash handlers, SIGTERM/SIGINT with the 25 s deadline and a second signal exiting at
 * once) is @brokkr/runtime's, the same as every other Brokkr process's. Exit 1 with one line on
 * stderr for a bad variable (also the webhook key the database needs); 0 after a clean shutdown.
 */
import { ConfigError } from '@brokkr/errors';
import { runService } from '@brokkr/runtime';
import { loadSettings } from './settings/api-settings.ts';
import { startApi } from './start.ts';

await runService({
  name: 'api',
  loadConfig: () => loadSettings(process.env),
  log: (settings) => settings.log,
  start: (settings, logger) => startApi(settings, logger),
  isOperatorError: (err) => err instanceof ConfigError,
});

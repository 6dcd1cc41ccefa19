/**
 * The renderer process: `node services/renderer/src/main.ts` (or dist/main.js). Its life (settings
 * read once, one logger, crash handlers, SIGTERM/SIGINT with the 25 s deadline) is
 * @brokkr/runtime's, as every Brokkr process's. Exit 1 with one line on stderr for a bad variable or
 * a brokkr-render binary that cannot run; 0 after a clean shutdown.
 */
import { parseEnv, rendererConfigSchema } from '@brokkr/config';
import { ConfigError } from '@brokkr/errors';
import { runService } from '@brokkr/runtime';
import { startRendererService } from './start.ts';

await runService({
  name: 'renderer',
  loadConfig: () => parseEnv(rendererConfigSchema),
  log: (config) => ({ level: config.BROKKR__LOG__LEVEL, format: config.BROKKR__LOG__FORMAT }),
  start: (config, logger) => startRendererService(config, logger),
  isOperatorError: (err) => err instanceof ConfigError,
});

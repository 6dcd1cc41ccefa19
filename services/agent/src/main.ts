/**
 * The in-cluster agent: `node services/agent/src/main.ts` (or dist/main.js). Exit codes: 0 after
 * a clean SIGTERM/SIGINT shutdown, 1 on bad configuration, a rejected PAK, an unknown agent or an
 * unreachable Kubernetes API at start-up.
 */
import { ConfigError } from '@brokkr/errors';
import { createLogger } from '@brokkr/logger';
import { loadSettings, type AgentSettings } from './config.ts';
import { startAgent, type RunningAgent } from './runtime/agent.ts';
import { StartupError } from './runtime/startup.ts';

const SHUTDOWN_DEADLINE_MS = 25_000;

function fail(message: string): never {
  process.stderr.write(`brokkr agent: ${message}\n`);
  process.exit(1);
}

let settings: AgentSettings;
try {
  settings = loadSettings();
} catch (err) {
  fail(err instanceof ConfigError ? err.message : String(err));
}

const logger = createLogger({ service: 'agent', level: settings.log.level, format: settings.log.format });
let agent: RunningAgent | undefined;
let stopping = false;

const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info({ signal }, 'shutting down');
  setTimeout(() => {
    logger.error('shutdown deadline exceeded');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  void (agent?.stop() ?? Promise.resolve()).then(
    () => {
      logger.info('stopped cleanly');
      process.exit(0);
    },
    (err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

try {
  agent = await startAgent(settings, logger);
  if (stopping) await agent.stop();
} catch (err) {
  if (err instanceof StartupError) {
    logger.error({ err: err.message }, 'start-up failed');
    fail(err.message);
  }
  logger.error({ err }, 'start-up failed unexpectedly');
  process.exit(1);
}

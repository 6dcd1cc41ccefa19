import { apiConfigSchema, parseEnv, type ApiConfig } from '@brokkr/config';
import { ConfigError } from '@brokkr/errors';
import { createLogger } from '@brokkr/logger';
import { startApi } from './start.ts';

function loadConfig(): ApiConfig {
  try {
    return parseEnv(apiConfigSchema, process.env);
  } catch (err) {
    // One readable message, no stack: the operator has a variable to fix, not a bug to report.
    process.stderr.write(`api: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ service: 'api', level: config.BROKKR__LOG__LEVEL, format: config.BROKKR__LOG__FORMAT });
  // Crash-only: a bug that escaped every handler is logged with its stack, then the process exits
  // and the orchestrator restarts it (state lives in Postgres and NATS, nothing is lost).
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled promise rejection');
    process.exit(1);
  });
  let api;
  try {
    api = await startApi(config, logger);
  } catch (err) {
    logger.fatal({ err }, 'api failed to start');
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    api.stop().then(
      () => {
        logger.info('api stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

await main();

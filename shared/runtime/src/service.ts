import { ConfigError, coerceError } from '@brokkr/errors';
import { createLogger, type Logger } from '@brokkr/logger';
import { onTerminationSignal } from './shutdown.ts';

/** What a service's work returns: stop() must stop taking work and finish what is in flight. */
export interface RunningWork {
  stop(): Promise<void>;
}

export interface ServiceDefinition<C> {
  /** Names the logger (`service` field) and the start/stop messages. */
  name: string;
  /** Reads the environment once; a ConfigError names every bad variable in one message. */
  loadConfig(): C;
  log(config: C): { level: string; format: 'json' | 'text' };
  start(config: C, logger: Logger): Promise<RunningWork>;
  /** Errors that are the operator's to fix (bad PAK, unreachable dependency): one line, no stack. */
  isOperatorError?(err: unknown): boolean;
}

/** One line on stderr (before a logger exists, or for an operator error), then exit 1. */
function exitWith(name: string, message: string): never {
  process.stderr.write(`${name}: ${message}\n`);
  process.exit(1);
}

/**
 * A crash must leave a last log line and a non-zero exit, never a half-alive process: an
 * unhandled rejection or exception is logged (flushed: pino may buffer) and the process exits 1.
 */
function installCrashHandlers(logger: Logger): void {
  const crash = (kind: string) => (err: unknown) => {
    logger.fatal({ err: coerceError(err) }, `${kind}: exiting`);
    logger.flush?.();
    process.exit(1);
  };
  process.on('uncaughtException', crash('uncaught exception'));
  process.on('unhandledRejection', crash('unhandled rejection'));
}

/**
 * The common life of every Brokkr process — the api, the hub services and the agent: the config
 * parsed once (fail fast), one logger, crash handlers, the service's work, and on SIGTERM/SIGINT
 * one ordered shutdown with a deadline (a second signal exits at once; see shutdown.ts).
 */
export async function runService<C>(definition: ServiceDefinition<C>): Promise<void> {
  let config: C;
  try {
    config = definition.loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) exitWith(definition.name, err.message);
    throw err;
  }
  const logger = createLogger({ service: definition.name, ...definition.log(config) });
  installCrashHandlers(logger);
  let work: RunningWork | undefined;
  let signalled = false;
  onTerminationSignal(logger, async () => {
    signalled = true;
    await work?.stop();
  });
  try {
    work = await definition.start(config, logger);
    // A signal that arrived while starting found nothing to stop yet.
    if (signalled) await work.stop();
  } catch (err) {
    if (definition.isOperatorError?.(err)) {
      logger.error({ err: (err as Error).message }, 'start-up failed');
      logger.flush?.();
      exitWith(definition.name, (err as Error).message);
    }
    logger.fatal({ err: coerceError(err) }, `${definition.name} failed to start`);
    logger.flush?.();
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
  }
}

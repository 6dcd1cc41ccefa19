import type { Logger } from '@brokkr/logger';

/**
 * Runs `shutdown` once on the first SIGTERM/SIGINT and exits 0 when it completes; a second signal,
 * or a shutdown that hangs past the deadline, exits 1 so an orchestrator is never stuck.
 */
export function onTerminationSignal(logger: Logger, shutdown: () => Promise<void>, deadlineMs = 25_000): void {
  let started = false;
  const handler = (signal: NodeJS.Signals) => {
    if (started) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    started = true;
    logger.info({ signal }, 'shutting down: draining in-flight work');
    const timer = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline exceeded');
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    shutdown().then(
      () => {
        logger.info('stopped cleanly');
        logger.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

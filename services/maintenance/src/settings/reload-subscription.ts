import { SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { ConfigReloadNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';

/**
 * Every maintenance replica listens (a plain subscription, not a queue group: all of them must
 * apply the change). The message is a signal to re-read this process's own sources; the values
 * in it are informational, because a service's environment may override what the file says.
 */
export function subscribeConfigReload(
  nc: NatsConnection,
  onReload: (notice: Partial<ConfigReloadNotice>) => void,
  logger: Logger,
): { close(): void } {
  const sub = nc.subscribe(SUBJECTS.configReload, {
    callback: (err, msg) => {
      if (err) return logger.warn({ err }, 'config reload subscription error');
      let notice: Partial<ConfigReloadNotice> = {};
      try {
        notice = msg.json<Partial<ConfigReloadNotice>>() ?? {};
      } catch {
        logger.debug('config reload notice without a JSON body');
      }
      onReload(notice);
    },
  });
  return { close: () => sub.unsubscribe() };
}

import { SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';

/** Payload of core `brokkr.config.reload` (docs/nats-subjects.md). */
export interface ConfigReloadNotice {
  reloaded_at: string;
  /** Who asked, e.g. `api`. */
  source: string;
  /** The changes the sender saw in its own sources; receivers re-read theirs. */
  changes?: { key: string; old_value: string; new_value: string }[];
}

/**
 * Every maintenance replica listens (a plain subscription, not a queue group: all of them must
 * apply the change). The message is a signal to re-read this process's own sources; the values
 * in it are informational, because a service's environment may override what the file says.
 */
export function subscribeConfigReload(nc: NatsConnection, onReload: (notice: Partial<ConfigReloadNotice>) => void, logger: Logger): { close(): void } {
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

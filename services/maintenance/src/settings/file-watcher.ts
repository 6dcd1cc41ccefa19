import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@brokkr/logger';

export interface FileWatch {
  close(): void;
}

/**
 * Calls `onChange` once things have been quiet for `debounceMs` after the config file changed.
 * It watches the directory, not the file: editors replace a file by renaming a new one over it,
 * and a Kubernetes ConfigMap volume swaps a `..data` symlink, both of which a watch on the old
 * inode would miss. Any event in the directory triggers a re-read; a re-read that finds no
 * difference changes nothing.
 */
export function watchConfigFile(file: string, debounceMs: number, onChange: () => void, logger: Logger): FileWatch {
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher;
  try {
    watcher = watch(path.dirname(path.resolve(file)), { persistent: false }, () => {
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
  } catch (err) {
    logger.warn({ err, file }, 'cannot watch the config file directory; reload through the API instead');
    return { close: () => undefined };
  }
  watcher.on('error', (err) => logger.warn({ err, file }, 'config file watcher failed'));
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

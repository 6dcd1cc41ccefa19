import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '@brokkr/logger';
import { sleep } from '../util/async.ts';

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;
/** The apiserver ends each watch after this; it is then resumed from the last resourceVersion seen. */
const WATCH_SECONDS = 300;

export type WatchPhase = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Versioned {
  metadata?: { resourceVersion?: string };
  code?: number;
}

/**
 * Keeps a client-node watch on `path` running until `signal` aborts. The first watch starts
 * without a resourceVersion, so the apiserver first replays every existing object as ADDED (the
 * handlers de-duplicate with their cursor; Brokkr skips that initial list, and with it whatever
 * happened while it was away). Later watches resume from the last resourceVersion seen (bookmarks
 * included), also after client-node's 30 s inactivity timeout; when that version is too old (410
 * Gone) the next one lists again. After a failure it waits 1 s, doubling to 60 s.
 */
export async function runWatch(
  kc: KubeConfig,
  path: string,
  onEvent: (phase: WatchPhase, object: unknown) => void,
  { logger, signal }: { logger: Logger; signal: AbortSignal },
): Promise<void> {
  let failures = 0;
  let resourceVersion: string | undefined;
  while (!signal.aborted) {
    const watch = new Watch(kc);
    const ended = new Promise<unknown>((resolve) => {
      const query = { allowWatchBookmarks: true, timeoutSeconds: WATCH_SECONDS, resourceVersion };
      void watch
        .watch(
          path,
          query,
          (phase, object: Versioned) => {
            if (phase === 'ERROR') {
              if (object?.code === 410) resourceVersion = undefined;
              return;
            }
            resourceVersion = object?.metadata?.resourceVersion ?? resourceVersion;
            if (phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') onEvent(phase, object);
          },
          resolve,
        )
        .then((controller) => signal.addEventListener('abort', () => controller.abort(), { once: true }), resolve);
    });
    const err = await ended;
    if (signal.aborted) return;
    // client-node ends a watch that saw nothing for 30 s; a quiet cluster is normal: resume at once.
    const idle = err instanceof Error && err.name === 'TimeoutError';
    if (err && !idle) {
      failures += 1;
      resourceVersion = undefined;
      logger.warn({ err, path }, 'cluster-events watch failed; restarting');
    } else {
      failures = 0;
    }
    await sleep(failures === 0 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1)), signal);
  }
}

import type { Logger } from '@brokkr/logger';
import type { KubeClient } from '../kube/client.ts';
import { collectionPath, type ApiResource } from '../kube/discovery.ts';
import type { LiveResource } from '../kube/objects.ts';
import { sleep } from '../util/async.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface WatchEvent {
  type: WatchEventType | 'BOOKMARK' | 'ERROR';
  object?: LiveResource & { code?: number };
}

export interface WatchOptions {
  labelSelector: string;
  namespace: string | undefined;
  logger: Logger;
  signal: AbortSignal;
  onEvent(type: WatchEventType, object: LiveResource): void;
}

const WATCH_SECONDS = '300';
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

/**
 * Keeps one watch of a resource type open until `signal` aborts, over the agent's own Kubernetes
 * client (a streamed GET, one JSON event per line). The first watch starts without a
 * resourceVersion, so the apiserver replays every object as ADDED: a change made while nobody
 * watched is seen too. Later watches resume from the last version seen (bookmarks included);
 * a version too old (410 Gone) starts over. After a failure: 1 s, doubling to 60 s.
 */
export async function watchResource(kube: KubeClient, resource: ApiResource, options: WatchOptions): Promise<void> {
  const { signal, logger } = options;
  const path = collectionPath(resource, resource.namespaced ? options.namespace : undefined);
  let resourceVersion: string | undefined;
  let failures = 0;
  while (!signal.aborted) {
    try {
      resourceVersion = await watchOnce(kube, path, resourceVersion, options);
      failures = 0;
    } catch (err) {
      if (signal.aborted) return;
      failures++;
      resourceVersion = undefined;
      logger.debug({ err, path }, 'drift watch failed; restarting');
      await sleep(Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1)), signal);
    }
  }
}

/** One watch request until the server ends it; returns the version to resume from (undefined: start over). */
async function watchOnce(kube: KubeClient, path: string, from: string | undefined, options: WatchOptions): Promise<string | undefined> {
  let resourceVersion = from;
  const query = {
    watch: '1',
    labelSelector: options.labelSelector,
    allowWatchBookmarks: 'true',
    timeoutSeconds: WATCH_SECONDS,
    resourceVersion,
  };
  for await (const event of events(kube.stream(path, query, options.signal))) {
    if (event.type === 'ERROR') {
      // 410 Gone: the version is too old to resume from; start over. Anything else backs off.
      if (event.object?.code === 410) return undefined;
      throw new Error(`watch ${path} ended with an error (${String(event.object?.code)})`);
    }
    resourceVersion = event.object?.metadata?.resourceVersion ?? resourceVersion;
    if (event.type !== 'BOOKMARK' && event.object) options.onEvent(event.type, event.object);
  }
  return resourceVersion;
}

/** The stream's lines as watch events. */
async function* events(chunks: AsyncIterable<Buffer>): AsyncGenerator<WatchEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of chunks) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) yield JSON.parse(line) as WatchEvent;
    }
  }
}

import type { Logger } from '@brokkr/logger';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import { FIELD_MANAGER } from '../manifest/keys.ts';

/** What the streamers had sent when they last saved: resuming from it after a restart replays nothing. */
export interface ClusterEventsCursor {
  /** When this agent first streamed (no backfill of what happened before it ever ran). */
  firstStart: string;
  /** Event object uid → the resourceVersion last sent (every update of an Event has a new one). */
  events: Record<string, string>;
  /** `namespace/pod/container/containerID` → kubelet timestamp of the last line handled (sent or rate-limited away). */
  logs: Record<string, string>;
}

/** Saved at most this often while something changed, and at stop. */
const SAVE_EVERY_MS = 2000;
/** Bounds (a ConfigMap holds 1 MiB): the oldest entries go first. */
const MAX_EVENT_ENTRIES = 5000;
const MAX_LOG_ENTRIES = 2000;

/**
 * The cursor lives in a ConfigMap of the agent's own namespace (`brokkr-agent-telemetry-<agent id>`),
 * written with server-side apply. A crash loses at most the last ~2 s of progress, which is then
 * sent again; a clean stop loses nothing.
 */
export class CursorStore {
  readonly cursor: ClusterEventsCursor;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    private readonly where: { kube: KubeClient; path: string; name: string; namespace: string; logger: Logger },
    cursor: ClusterEventsCursor,
  ) {
    this.cursor = cursor;
  }

  static async load(kube: KubeClient, namespace: string, agentId: string, logger: Logger): Promise<CursorStore> {
    const name = `brokkr-agent-telemetry-${agentId}`;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${name}`;
    let cursor: ClusterEventsCursor = { firstStart: new Date().toISOString(), events: {}, logs: {} };
    try {
      const cm = await kube.request<{ data?: Record<string, string> }>('GET', path);
      const data = cm.data ?? {};
      cursor = {
        firstStart: data.firstStart ?? cursor.firstStart,
        events: JSON.parse(data.events ?? '{}') as Record<string, string>,
        logs: JSON.parse(data.logs ?? '{}') as Record<string, string>,
      };
    } catch (err) {
      if (!isNotFound(err)) logger.warn({ err, namespace, name }, 'cluster-events cursor not read: streaming starts from now');
    }
    const store = new CursorStore({ kube, path, name, namespace, logger }, cursor);
    store.changed();
    return store;
  }

  /** Something was sent: save soon. */
  changed(): void {
    this.dirty = true;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.save();
    }, SAVE_EVERY_MS);
  }

  /** Writes now if anything changed (also what stop() awaits). */
  save(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.saving = this.saving.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      prune(this.cursor.events, MAX_EVENT_ENTRIES);
      prune(this.cursor.logs, MAX_LOG_ENTRIES);
      const { kube, path, name, namespace, logger } = this.where;
      try {
        await kube.request('PATCH', path, {
          query: { fieldManager: `${FIELD_MANAGER}-telemetry`, force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace },
            data: {
              firstStart: this.cursor.firstStart,
              events: JSON.stringify(this.cursor.events),
              logs: JSON.stringify(this.cursor.logs),
            },
          },
          retry: false,
        });
      } catch (err) {
        this.dirty = true;
        logger.warn({ err }, 'cluster-events cursor not saved (retried with the next change)');
      }
    });
    return this.saving;
  }
}

/** Drops the oldest insertions beyond `max` (a Record keeps insertion order; entries are re-inserted when updated). */
function prune(record: Record<string, string>, max: number): void {
  const keys = Object.keys(record);
  for (const key of keys.slice(0, Math.max(0, keys.length - max))) delete record[key];
}

/** Sets a key so it moves to the end (most recent) of the insertion order. */
export function touch(record: Record<string, string>, key: string, value: string): void {
  delete record[key];
  record[key] = value;
}

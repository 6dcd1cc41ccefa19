import type { K8sEventFrameBody, PodLogLineFrameBody, TelemetryFrame } from '@brokkr/contracts';
import { pgErrorCode, type Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { StackFeed } from './stack-feed.ts';
import { insertK8sEvents, insertPodLogLines } from './sql/insert-cluster-events.ts';

/** Frames are written together once this many wait, or after FLUSH_DELAY_MS. */
const BATCH_SIZE = 500;
const FLUSH_DELAY_MS = 50;
/** Frames waiting for the database beyond this are dropped (Postgres slow or down): cluster events never grow memory without bound. */
export const MAX_WAITING = 20_000;

type Stored = Extract<TelemetryFrame, { type: 'k8s_event' | 'pod_log_line' }>;

/**
 * Stores accepted frames in batches, then publishes each stored frame to the stack's live
 * subscribers on every replica (Brokkr broadcasts first and stores after, so a subscriber could see
 * a line that REST never returns).
 */
export class ClusterEventsWriter {
  private waiting: Stored[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Queryable,
    private readonly feed: StackFeed,
    private readonly logger: Logger,
  ) {}

  /** false: dropped, too many frames are already waiting. */
  add(frame: Stored): boolean {
    if (this.waiting.length >= MAX_WAITING) return false;
    this.waiting.push(frame);
    if (this.waiting.length >= BATCH_SIZE) this.flushSoon(0);
    else this.flushSoon(FLUSH_DELAY_MS);
    return true;
  }

  /** Writes everything waiting now (tests and shutdown). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.running.then(() => this.writeBatch());
    return this.running;
  }

  private flushSoon(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), delayMs);
  }

  private async writeBatch(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, BATCH_SIZE);
      // One statement per table, each retried on its own, so a bad row never stores another twice.
      for (const kind of ['k8s_event', 'pod_log_line'] as const) {
        const stored = await this.store(batch.filter((f) => f.type === kind));
        for (const frame of stored) this.feed.publish(frame);
      }
    }
  }

  /** The frames that were stored. A bad value (class 22/23) costs only its own row: the batch is retried row by row. */
  private async store(batch: Stored[]): Promise<Stored[]> {
    if (batch.length === 0) return batch;
    try {
      await this.insert(batch);
      return batch;
    } catch (err) {
      const code = pgErrorCode(err) ?? '';
      if (!code.startsWith('22') && !code.startsWith('23')) {
        this.logger.warn({ err, frames: batch.length }, 'cluster-events batch not stored');
        return [];
      }
    }
    const stored: Stored[] = [];
    for (const frame of batch) {
      try {
        await this.insert([frame]);
        stored.push(frame);
      } catch (err) {
        this.logger.debug({ err, type: frame.type }, 'telemetry frame not stored');
      }
    }
    return stored;
  }

  private async insert(frames: Stored[]): Promise<void> {
    const events: K8sEventFrameBody[] = [];
    const lines: PodLogLineFrameBody[] = [];
    for (const f of frames) {
      if (f.type === 'k8s_event') events.push(f.body);
      else lines.push(f.body);
    }
    await insertK8sEvents(this.db, events);
    await insertPodLogLines(this.db, lines);
  }
}

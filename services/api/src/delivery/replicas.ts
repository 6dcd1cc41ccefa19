import type { NatsConnection } from '@nats-io/transport-node';
import { SUBJECTS } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';

/** How often a replica says it is there, and how long one it no longer hears from still counts. */
const ANNOUNCE_MS = 5000;
const FORGET_MS = 3 * ANNOUNCE_MS;
const FLUSH_TIMEOUT_MS = 2000;

/**
 * The other api replicas this one has heard from lately (`brokkr.api.presence`). A write is
 * answered only when no replica can still answer from before it: this replica's own answers hear
 * its notices in the write (pipeline.ts), the others' once nats-server has routed them (a flush,
 * send.ts). Without another replica there is nobody to wait for, and the write is answered once it
 * committed and this replica's answers heard it.
 *
 * A replica announces itself, and waits until nats-server has routed that announcement, before it
 * serves anything (start.ts): from then on every other replica counts it, so none answers a write
 * before the notices reached an answer it keeps.
 */
export class Replicas {
  private readonly others = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private subscription: { unsubscribe(): void } | undefined;

  constructor(private readonly origin: string) {}

  /** Listens, announces, and resolves once the first announcement has reached the server (bounded). */
  async start(nc: NatsConnection, logger: Logger): Promise<void> {
    this.subscription = nc.subscribe(SUBJECTS.apiPresence, {
      callback: (err, msg) => {
        if (err) return;
        const origin = msg.string();
        if (origin && origin !== this.origin) this.others.set(origin, Date.now());
      },
    });
    const announce = () => {
      try {
        nc.publish(SUBJECTS.apiPresence, this.origin);
      } catch (err) {
        logger.debug({ err }, 'presence not announced');
      }
    };
    announce();
    this.timer = setInterval(announce, ANNOUNCE_MS).unref();
    await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
      logger.warn({ err }, 'presence announcement not confirmed'),
    );
  }

  /** Whether another replica may hold answers a write here must reach before it is answered. */
  othersMayAnswer(now = Date.now()): boolean {
    for (const [origin, heardAt] of this.others) {
      if (now - heardAt <= FORGET_MS) return true;
      this.others.delete(origin);
    }
    return false;
  }

  stop(): void {
    clearInterval(this.timer);
    this.subscription?.unsubscribe();
  }
}

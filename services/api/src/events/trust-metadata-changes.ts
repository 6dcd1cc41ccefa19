import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';

/**
 * "The trust metadata the hub relays changed" (PUT /trust-metadata: a root version, a revocation
 * list or a timestamp). Every api replica hears it on the core subject
 * `brokkr.cache.invalidate.trust` (docs/nats-subjects.md): it drops its kept copy of the metadata
 * and tells the agents that check signatures on its sockets (`trust_metadata_changed`), which read
 * it at once instead of at their next periodic refresh. Lossy like every core subject: an agent
 * that misses it reads the metadata at its next refresh anyway.
 */
const SUBJECT = SUBJECTS.cacheInvalidate('trust');

/** Tells every replica (this one included, through NATS). */
export function publishTrustMetadataChanged(nc: NatsConnection, logger: Logger): void {
  try {
    publishCore(nc, SUBJECT, {});
  } catch (err) {
    logger.warn({ err }, 'trust metadata change not published');
  }
}

/** Calls `listener` for every change; the subscription ends with the connection's drain. */
export function onTrustMetadataChanged(nc: NatsConnection, logger: Logger, listener: () => void): void {
  nc.subscribe(SUBJECT, {
    callback: (err) => {
      if (err) return logger.warn({ err }, 'trust metadata change subscription error');
      listener();
    },
  });
}

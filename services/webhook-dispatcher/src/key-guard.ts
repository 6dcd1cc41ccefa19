import { ConfigError } from '@brokkr/errors';
import type { WebhookKey } from '@brokkr/crypto';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { subscriptionsExist } from './sql/subscriptions.ts';

/**
 * Brokkr refuses to start without a configured key once subscriptions exist: a random
 * per-process key could not read their URLs, and every delivery would go dead.
 */
export async function requireKeyWhenSubscriptionsExist(db: Queryable, key: WebhookKey, logger: Logger): Promise<void> {
  if (key.configured) {
    logger.info({ fingerprint: key.fingerprint }, 'webhook encryption key loaded');
    return;
  }
  if (await subscriptionsExist(db)) {
    throw new ConfigError(
      'BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY is not set but webhook subscriptions exist: set the key they were encrypted with',
      ['BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY'],
    );
  }
  logger.warn({ fingerprint: key.fingerprint }, 'no webhook encryption key configured; using a random per-process key (set BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY)');
}

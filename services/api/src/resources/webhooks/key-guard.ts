import { requireKeyWhenSubscriptionsExist, type WebhookKey } from '@brokkr/crypto';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { anySubscriptionExists } from '../../domain/webhook-subscriptions.ts';

/**
 * Called once at start-up with the process's key: like Brokkr, refuse to run with a random
 * per-process key while subscriptions exist (their URLs could not be decrypted, and new ones would
 * be unreadable to the dispatcher).
 */
export async function requireWebhookKey(db: Queryable, key: WebhookKey, logger: Logger): Promise<void> {
  await requireKeyWhenSubscriptionsExist(key, () => anySubscriptionExists(db), logger);
}

import { publishCore, SUBJECTS } from '@brokkr/bus';
import { loadWebhookKey, requireKeyWhenSubscriptionsExist, type WebhookKey } from '@brokkr/crypto';
import type { ApiConfig } from '@brokkr/config';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { metricsFor, type Counter } from '@brokkr/telemetry';
import type { ApiContext } from '../context.ts';

// One key per process: without a configured key Brokkr mints a random one at start, and every
// request of this process must use that same one.
const keys = new WeakMap<object, WebhookKey>();

export function webhookKey(ctx: Pick<ApiContext, 'config'>): WebhookKey {
  let key = keys.get(ctx.config);
  if (!key) {
    key = loadWebhookKey(ctx.config.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY);
    keys.set(ctx.config, key);
  }
  return key;
}

/**
 * Called once at start-up: like Brokkr, refuse to run with a random per-process key while
 * subscriptions exist (their URLs could not be decrypted, and new ones would be unreadable to
 * the dispatcher).
 */
export async function requireWebhookKey(db: Queryable, config: ApiConfig, logger: Logger): Promise<void> {
  const subscriptionsExist = async () => {
    const { rows } = await db.query<{ exists: boolean }>('SELECT EXISTS (SELECT 1 FROM webhook_subscriptions) AS exists');
    return rows[0]?.exists ?? false;
  };
  await requireKeyWhenSubscriptionsExist(webhookKey({ config }), subscriptionsExist, logger);
}

/** The SSRF guard's switch (the dispatcher reads the same variable, same default: off). */
export function allowPrivateNetworks(config: ApiConfig): boolean {
  return config.BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS;
}

/** Every dispatcher replica drops its subscription cache. */
export function invalidateSubscriptionCaches(ctx: Pick<ApiContext, 'bus' | 'logger'>, subscriptionId: string): void {
  try {
    publishCore(ctx.bus.nc, SUBJECTS.cacheInvalidate('webhooks'), { id: subscriptionId });
  } catch (err) {
    // The dispatchers also reload on their own every few seconds.
    ctx.logger.warn({ err, subscriptionId }, 'webhook cache invalidation not sent');
  }
}

/** Dispatchers claim due deliveries now instead of at their next poll. */
export function wakeDispatchers(ctx: Pick<ApiContext, 'bus' | 'logger'>): void {
  try {
    publishCore(ctx.bus.nc, SUBJECTS.notifyDeliveries, {});
  } catch (err) {
    ctx.logger.debug({ err }, 'delivery wake-up not sent');
  }
}

const decryptCounters = new WeakMap<object, Counter<'field' | 'path'>>();

/** Brokkr's `brokkr_webhook_decrypt_failures_total{field,path}` on the api's registry. */
export function decryptFailures(ctx: Pick<ApiContext, 'metrics'>): Counter<'field' | 'path'> {
  let counter = decryptCounters.get(ctx.metrics.registry);
  if (!counter) {
    counter = metricsFor(ctx.metrics.registry).counter({
      name: 'brokkr_webhook_decrypt_failures_total',
      help: 'Webhook URLs or auth headers that could not be decrypted',
      labelNames: ['field', 'path'] as const,
    });
    decryptCounters.set(ctx.metrics.registry, counter);
  }
  return counter;
}

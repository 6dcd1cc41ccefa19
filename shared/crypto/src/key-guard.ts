import { ConfigError } from '@brokkr/errors';
import type { WebhookKey } from './envelope.ts';

/** The two log calls the guard makes (a pino logger fits). */
export interface KeyGuardLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

const KEY_VARIABLE = 'BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY';

/**
 * The start-up rule every service holding the webhook key follows (api, webhook-dispatcher), as
 * Brokkr does: without a configured key a process mints a random one, which cannot read the URLs
 * and secrets of existing subscriptions — so refuse to start when there are any. With none yet,
 * start with a warning (a development setup).
 */
export async function requireKeyWhenSubscriptionsExist(
  key: WebhookKey,
  subscriptionsExist: () => Promise<boolean>,
  logger: KeyGuardLogger,
): Promise<void> {
  if (key.configured) {
    logger.info({ fingerprint: key.fingerprint }, 'webhook encryption key loaded');
    return;
  }
  if (await subscriptionsExist()) {
    throw new ConfigError(`${KEY_VARIABLE} is not set but webhook subscriptions exist: set the key they were encrypted with`, [
      KEY_VARIABLE,
    ]);
  }
  logger.warn(
    { fingerprint: key.fingerprint },
    `no webhook encryption key configured; using a random per-process key (set ${KEY_VARIABLE})`,
  );
}

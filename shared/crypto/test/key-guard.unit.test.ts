import { expect } from 'chai';
import { ConfigError } from '@brokkr/errors';
import { loadWebhookKey, requireKeyWhenSubscriptionsExist, type KeyGuardLogger } from '../src/index.ts';

function recordingLogger(): KeyGuardLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (_d, m) => void lines.push(`info ${m}`), warn: (_d, m) => void lines.push(`warn ${m}`) };
}

describe('requireKeyWhenSubscriptionsExist (the webhook-key start-up guard of api and dispatcher)', () => {
  it('starts with a configured key without asking the database', async () => {
    const logger = recordingLogger();
    let asked = false;
    await requireKeyWhenSubscriptionsExist(loadWebhookKey('ab'.repeat(32)), async () => (asked = true), logger);
    expect(asked).to.equal(false);
    expect(logger.lines).to.deep.equal(['info webhook encryption key loaded']);
  });

  it('refuses to start on a random key when subscriptions exist, naming the variable', async () => {
    const err = await requireKeyWhenSubscriptionsExist(loadWebhookKey(undefined), async () => true, recordingLogger()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.include('BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY');
  });

  it('starts with a warning on a random key while there are no subscriptions', async () => {
    const logger = recordingLogger();
    await requireKeyWhenSubscriptionsExist(loadWebhookKey(undefined), async () => false, logger);
    expect(logger.lines[0]).to.match(/^warn no webhook encryption key configured/);
  });
});

import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import type { AgentSettings } from '../config.ts';
import { WebhookPoller } from './poller.ts';

export interface WebhookWiring {
  settings: AgentSettings;
  agentId: string;
  /** The agent's version, for the User-Agent receivers see. */
  version: string;
  registry: Registry;
  logger: Logger;
  isActive(): boolean;
}

/** The webhook poller wired to the broker, or none when agent-delivered webhooks are off (interval 0). */
export function createWebhookPoller(w: WebhookWiring): WebhookPoller | undefined {
  const { settings } = w;
  if (settings.webhookPollIntervalMs <= 0) return undefined;
  return new WebhookPoller({
    brokerUrl: settings.brokerUrl,
    pak: settings.pak,
    agentId: w.agentId,
    intervalMs: settings.webhookPollIntervalMs,
    registry: w.registry,
    logger: w.logger.child({ loop: 'webhooks' }),
    userAgent: `brokkr-agent/${w.version}`,
    isActive: w.isActive,
  });
}

import { BrokerHttp } from '../broker/http.ts';
import type { DeliveryReport, PendingWebhookDelivery } from './types.ts';

const PENDING_TIMEOUT_MS = 30_000;
const REPORT_TIMEOUT_MS = 10_000;

/**
 * The broker's agent-delivered webhook endpoints. A connection pool of its own, so claims and
 * reports never queue behind a target-state request the broker is holding (long-poll).
 */
export class WebhookBrokerApi {
  private readonly http: BrokerHttp;

  constructor(brokerUrl: string, pak: string) {
    this.http = new BrokerHttp(brokerUrl, pak);
  }

  /** Claims up to 10 deliveries for this agent (leased to it for 60 s). */
  async pending(agentId: string, signal: AbortSignal): Promise<PendingWebhookDelivery[]> {
    const res = await this.http.call<unknown>('GET', `/api/v1/agents/${agentId}/webhooks/pending`, {
      timeoutMs: PENDING_TIMEOUT_MS,
      signal,
    });
    return Array.isArray(res.body) ? (res.body as unknown[]).filter(isDelivery) : [];
  }

  async report(deliveryId: string, report: DeliveryReport): Promise<void> {
    await this.http.call('POST', `/api/v1/webhook-deliveries/${deliveryId}/result`, { body: report, timeoutMs: REPORT_TIMEOUT_MS });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** Only what can be sent and reported; anything else in the list is ignored. */
function isDelivery(value: unknown): value is PendingWebhookDelivery {
  const d = value as Partial<PendingWebhookDelivery> | null;
  return typeof d?.id === 'string' && typeof d.url === 'string' && typeof d.payload === 'string';
}

/** Wire shapes of agent-delivered webhooks: defined once in @brokkr/contracts. */
export type { DeliveryReport, PendingWebhookDelivery } from '@brokkr/contracts';

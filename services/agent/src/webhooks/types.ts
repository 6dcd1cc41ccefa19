/** Wire shapes of agent-delivered webhooks (contract §2.8, §5.6): defined once in @brokkr/contracts. */
export type { DeliveryReport, PendingWebhookDelivery } from '@brokkr/contracts';

/** Wire shapes of agent-delivered webhooks (contract §2.8, §5.6), snake_case as on the wire. */

export interface PendingWebhookDelivery {
  id: string;
  subscription_id: string;
  event_type: string;
  /** The JSON body to send, verbatim. */
  payload: string;
  url: string;
  auth_header: string | null;
  timeout_seconds: number;
  max_retries: number;
  attempts: number;
  /**
   * Our broker's extension: Standard Webhooks headers it signed at claim time (the secret stays on
   * the hub). Brokkr's broker does not send it; its deliveries then go out unsigned, as Brokkr's.
   */
  webhook_headers?: Record<string, string>;
}

/** `POST /webhook-deliveries/{id}/result`; absent fields are omitted, as Brokkr's agent does. */
export interface DeliveryReport {
  success: boolean;
  status_code?: number;
  error?: string;
  duration_ms: number;
}

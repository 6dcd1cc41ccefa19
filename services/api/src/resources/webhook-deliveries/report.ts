import { sanitizeErrorText } from '@brokkr/crypto';

/**
 * How an agent's delivery report is read: its status code and Brokkr's
 * `last_error` wording for agent reports. Whether it is retried, and when, is the one retry
 * policy of @brokkr/webhook-deliveries.
 */

/** A status code outside 0..65535 cannot be an HTTP status: treated as absent, like Brokkr. */
export function usableStatusCode(value: number | null | undefined): number | undefined {
  return value !== null && value !== undefined && value >= 0 && value <= 65535 ? value : undefined;
}

/** `HTTP <code>: <error>`, the error alone when it already says so, or `Unknown error`. */
export function agentFailureMessage(error: string | null | undefined, statusCode: number | undefined): string {
  const detail = error?.trim() || undefined;
  if (statusCode !== undefined && detail !== undefined)
    return detail.startsWith(`HTTP ${statusCode}`) ? detail : `HTTP ${statusCode}: ${detail}`;
  if (statusCode !== undefined) return `HTTP ${statusCode}`;
  return detail ?? 'Unknown error';
}

/**
 * The text stored as last_error and audited: Brokkr's wording, then without the endpoint (agents
 * report their HTTP client's message, which names the URL or host:port; the URL is encrypted at
 * rest), control characters (a NUL cannot be stored) or unbounded length. `url` is the target.
 */
export function storedAgentError(error: string | null | undefined, statusCode: number | undefined, url: string | undefined): string {
  return sanitizeErrorText(agentFailureMessage(error, statusCode), { endpoints: [url] });
}

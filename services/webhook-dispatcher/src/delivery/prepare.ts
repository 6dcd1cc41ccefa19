import { decryptString, DecryptionError, headerValueProblem, signatureHeaders, type WebhookKey } from '@brokkr/crypto';
import type { ClaimedDelivery } from '@brokkr/webhook-deliveries';

export interface PreparedDelivery {
  url: string;
  /** host:port, the unit of per-endpoint concurrency. */
  host: string;
  authHeader: string | null;
  secrets: string[];
}

/**
 * `decrypt`: a secret did not decrypt (counted in brokkr_webhook_decrypt_failures_total);
 * `invalid`: it decrypted to something no request can carry. Either way the delivery is dead.
 */
export type PrepareResult =
  { ok: true; value: PreparedDelivery } | { ok: false; reason: 'decrypt' | 'invalid'; field: string; error: string };

type SecretField = 'url' | 'auth_header' | 'signing_secret' | 'previous_signing_secret';

function open(key: WebhookKey, field: SecretField, data: Buffer | null): string | null {
  if (data === null) return null;
  try {
    return decryptString(key, data);
  } catch (err) {
    if (err instanceof DecryptionError) throw Object.assign(err, { field });
    throw err;
  }
}

/**
 * Decrypts what the POST needs. A failure is final: the delivery goes dead. So is
 * an auth header stored before the api validated it (a line break or a non-ASCII character):
 * undici refuses to send it, and retrying cannot change that.
 */
export function prepareDelivery(key: WebhookKey, row: ClaimedDelivery): PrepareResult {
  let url: string | null;
  let authHeader: string | null;
  let secrets: string[];
  try {
    url = open(key, 'url', row.url_encrypted);
    authHeader = open(key, 'auth_header', row.auth_header_encrypted);
    secrets = [
      open(key, 'signing_secret', row.signing_secret_encrypted),
      open(key, 'previous_signing_secret', row.previous_signing_secret_encrypted),
    ].filter((s): s is string => s !== null);
  } catch (err) {
    const field = (err as { field?: string }).field ?? 'unknown';
    return { ok: false, reason: 'decrypt', field, error: `Failed to decrypt ${field}: ${(err as Error).message}` };
  }
  let host: string;
  try {
    host = new URL(url ?? '').host;
  } catch {
    return { ok: false, reason: 'invalid', field: 'url', error: 'Request failed: the subscription URL is not a valid URL' };
  }
  const authProblem = authHeader === null ? undefined : headerValueProblem(authHeader);
  if (authProblem)
    return {
      ok: false,
      reason: 'invalid',
      field: 'auth_header',
      error: `Request failed: the auth header cannot be sent (it ${authProblem})`,
    };
  return { ok: true, value: { url: url ?? '', host, authHeader, secrets } };
}

/** Standard Webhooks headers plus Brokkr's, computed at send time (the timestamp is this attempt's). */
export function requestHeaders(row: ClaimedDelivery, prepared: PreparedDelivery): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'brokkr-webhook-dispatcher',
    ...(prepared.authHeader !== null ? { authorization: prepared.authHeader } : {}),
    ...signatureHeaders(prepared.secrets, { id: row.event_id, body: row.payload }),
  };
}

import { decryptString, DecryptionError, signatureHeaders, type WebhookKey } from '@brokkr/crypto';
import type { ClaimedDelivery } from '../sql/claim-deliveries.ts';

export interface PreparedDelivery {
  url: string;
  /** host:port, the unit of per-endpoint concurrency. */
  host: string;
  authHeader: string | null;
  secrets: string[];
}

export type PrepareResult = { ok: true; value: PreparedDelivery } | { ok: false; field: string; error: string };

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

/** Decrypts what the POST needs. A failure is final (contract §5.4): the delivery goes dead. */
export function prepareDelivery(key: WebhookKey, row: ClaimedDelivery): PrepareResult {
  let url: string | null;
  let authHeader: string | null;
  let secrets: string[];
  try {
    url = open(key, 'url', row.url_encrypted);
    authHeader = open(key, 'auth_header', row.auth_header_encrypted);
    secrets = [open(key, 'signing_secret', row.signing_secret_encrypted), open(key, 'previous_signing_secret', row.previous_signing_secret_encrypted)]
      .filter((s): s is string => s !== null);
  } catch (err) {
    const field = (err as { field?: string }).field ?? 'unknown';
    return { ok: false, field, error: `Failed to decrypt ${field}: ${(err as Error).message}` };
  }
  let host: string;
  try {
    host = new URL(url ?? '').host;
  } catch {
    return { ok: false, field: 'url', error: 'Request failed: the subscription URL is not a valid URL' };
  }
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

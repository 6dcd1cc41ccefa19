import { createHmac, randomBytes } from 'node:crypto';
import { BrokkrError } from '@brokkr/errors';

/**
 * Standard Webhooks (standardwebhooks.com) signing, so receivers can use any of its libraries:
 * secret `whsec_<base64 of 32 random bytes>`, signed content `<webhook-id>.<webhook-timestamp>.<body>`,
 * header `webhook-signature: v1,<base64 HMAC-SHA256>`; during a secret rotation both the new and
 * the old secret sign, space-separated, and a receiver accepts any one that verifies.
 */
const PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export class InvalidSigningSecretError extends BrokkrError {}

export function generateSigningSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

function secretBytes(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length === 0) throw new InvalidSigningSecretError('signing secret is empty or not base64');
  return bytes;
}

export interface SignInput {
  /** `webhook-id`: the event id, stable across retries so receivers can dedupe. */
  id: string;
  /** `webhook-timestamp`: integer seconds since the epoch, of this attempt. */
  timestamp: number;
  /** The exact bytes sent as the request body. */
  body: string;
}

/** The `webhook-signature` value for one or more active secrets. */
export function sign(secrets: string | readonly string[], input: SignInput): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new InvalidSigningSecretError('no signing secret');
  const content = `${input.id}.${input.timestamp}.${input.body}`;
  return list.map((s) => `v1,${createHmac('sha256', secretBytes(s)).update(content).digest('base64')}`).join(' ');
}

/**
 * The Standard Webhooks headers for one attempt (timestamp = now unless given). A subscription
 * without a secret (a row migrated from Brokkr, which never signed) gets no `webhook-signature`.
 */
export function signatureHeaders(
  secrets: readonly string[],
  input: Omit<SignInput, 'timestamp'> & { timestamp?: number },
): Record<string, string> {
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { 'webhook-id': input.id, 'webhook-timestamp': String(timestamp) };
  if (secrets.length > 0) headers['webhook-signature'] = sign(secrets, { id: input.id, timestamp, body: input.body });
  return headers;
}

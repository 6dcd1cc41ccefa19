import type { z } from 'zod';
import type { pendingDeliverySchema } from '@brokkr/contracts';
import { decryptString, headerValueProblem, signatureHeaders } from '@brokkr/crypto';
import { recordAgentUndeliverable, type AgentClaimedDelivery } from '@brokkr/webhook-deliveries';
import type { ApiContext } from '../../context.ts';
import { findSubscriptionSecrets } from '../../domain/webhook-subscriptions.ts';

/**
 * Turning deliveries an agent claimed into what it sends: the URL and auth header decrypted, the
 * payload signed here (the signing secret never leaves the hub). A row that cannot be handed out
 * is settled dead and audited.
 */

export type Pending = z.output<typeof pendingDeliverySchema>;
type SecretField = 'url' | 'auth_header' | 'signing_secret' | 'previous_signing_secret';
type SecretsLookup = Map<string, Promise<string[] | Error | undefined>>;

// Brokkr's last_error wording for the first two.
const FIELD_NAMES: Record<SecretField, string> = {
  url: 'URL',
  auth_header: 'auth header',
  signing_secret: 'signing secret',
  previous_signing_secret: 'previous signing secret',
};

/** Decrypts one field; a failure is counted and says which field it was (the delivery then goes dead). */
function open(ctx: ApiContext, field: SecretField, data: Buffer | null): string | null {
  if (data === null) return null;
  try {
    return decryptString(ctx.webhookKey, data);
  } catch (err) {
    ctx.metrics.webhookDecryptFailures.inc({ field, path: 'agent' });
    throw new Error(`Failed to decrypt ${FIELD_NAMES[field]}: ${(err as Error).message}`, { cause: err });
  }
}

async function readSecrets(ctx: ApiContext, subscriptionId: string): Promise<string[] | Error | undefined> {
  const sub = await findSubscriptionSecrets(ctx.db.pool, subscriptionId);
  if (!sub) return undefined;
  try {
    return [
      open(ctx, 'signing_secret', sub.signing_secret_encrypted),
      open(ctx, 'previous_signing_secret', sub.previous_signing_secret_encrypted),
    ].filter((s): s is string => s !== null);
  } catch (err) {
    return err as Error;
  }
}

/** The active signing secrets of a subscription, read once per claim (the query applies the rotation grace). */
function signingSecrets(ctx: ApiContext, subscriptionId: string, lookup: SecretsLookup): Promise<string[] | Error | undefined> {
  let secrets = lookup.get(subscriptionId);
  if (!secrets) {
    secrets = readSecrets(ctx, subscriptionId);
    lookup.set(subscriptionId, secrets);
  }
  return secrets;
}

/**
 * A row that cannot be handed out is already claimed, so it is settled (dead, audited) rather
 * than left to cycle through lease expiry forever.
 */
async function settleUndeliverable(ctx: ApiContext, agentId: string, row: AgentClaimedDelivery, failure: string): Promise<undefined> {
  const dead = await recordAgentUndeliverable(ctx.db.pool, { id: row.id, agentId, attempts: row.attempts }, failure);
  if (dead) {
    await ctx.audit({
      actor: 'system',
      action: 'webhook.delivery_failed',
      resourceType: 'webhook_subscription',
      resourceId: row.subscription_id,
      details: { delivery_id: row.id, event_type: row.event_type, attempts: dead.attempts, error: failure },
    });
  }
  return undefined;
}

/** A row the claim settled dead (attempts used up, the last one interrupted): audited, not handed out. */
async function auditSettledAtClaim(ctx: ApiContext, row: AgentClaimedDelivery): Promise<undefined> {
  await ctx.audit({
    actor: 'system',
    action: 'webhook.delivery_failed',
    resourceType: 'webhook_subscription',
    resourceId: row.subscription_id,
    details: { delivery_id: row.id, event_type: row.event_type, attempts: row.attempts, error: row.last_error },
  });
  return undefined;
}

/** Decrypts what the agent needs and signs the payload for it. */
async function toPending(ctx: ApiContext, agentId: string, row: AgentClaimedDelivery, lookup: SecretsLookup): Promise<Pending | undefined> {
  if (row.status === 'dead') return auditSettledAtClaim(ctx, row);
  const secrets = await signingSecrets(ctx, row.subscription_id, lookup);
  // Gone between the claim and now: its deliveries went with it (ON DELETE CASCADE).
  if (secrets === undefined) return undefined;
  let url: string;
  let auth: string | null;
  try {
    url = open(ctx, 'url', row.url_encrypted) ?? '';
    auth = open(ctx, 'auth_header', row.auth_header_encrypted);
    if (secrets instanceof Error) throw secrets;
    // Stored before create/update checked it: no agent could send it, so the delivery is dead.
    const authProblem = auth === null ? undefined : headerValueProblem(auth);
    if (authProblem) throw new Error(`auth header cannot be sent as an HTTP header (it ${authProblem})`);
  } catch (err) {
    return settleUndeliverable(ctx, agentId, row, (err as Error).message);
  }
  return {
    id: row.id,
    subscription_id: row.subscription_id,
    event_type: row.event_type,
    payload: row.payload,
    url,
    auth_header: auth,
    timeout_seconds: row.timeout_seconds,
    max_retries: row.max_retries,
    attempts: row.attempts,
    webhook_headers: signatureHeaders(secrets, { id: row.event_id, body: row.payload }) as Pending['webhook_headers'],
  };
}

/** The claimed rows as the agent receives them, in claim order; rows settled instead are left out. */
export async function handOut(ctx: ApiContext, agentId: string, claimed: readonly AgentClaimedDelivery[]): Promise<Pending[]> {
  const lookup: SecretsLookup = new Map();
  const pending: Pending[] = [];
  for (const row of claimed) {
    const item = await toPending(ctx, agentId, row, lookup);
    if (item) pending.push(item);
  }
  return pending;
}

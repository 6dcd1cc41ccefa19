import { decryptString } from '@brokkr/crypto';
import { z } from 'zod';
import { forbidden, notFound } from '../http/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../http/route.ts';
import { errorResponse, uuid } from '../http/schemas.ts';
import type { ApiContext } from '../context.ts';
import { agentMarkDead, claimForAgent, type AgentClaimedDelivery } from './webhook-deliveries-agent-sql.ts';
import { decryptFailures, webhookKey } from './webhooks-key.ts';
import { pendingDeliverySchema } from './webhooks-schemas.ts';

const CLAIM_LIMIT = 10;

type Pending = z.output<typeof pendingDeliverySchema>;

function decryptField(ctx: ApiContext, field: 'url' | 'auth_header', data: Buffer): string | Error {
  try {
    return decryptString(webhookKey(ctx), data);
  } catch (err) {
    decryptFailures(ctx).inc({ field, path: 'agent' });
    return err as Error;
  }
}

/**
 * Decrypts what the agent needs. A row that cannot be decrypted is already claimed, so it is
 * settled (dead, audited) rather than left to cycle through lease expiry forever.
 */
async function toPending(ctx: ApiContext, agentId: string, row: AgentClaimedDelivery): Promise<Pending | undefined> {
  const url = decryptField(ctx, 'url', row.url_encrypted);
  const auth = row.auth_header_encrypted === null ? null : decryptField(ctx, 'auth_header', row.auth_header_encrypted);
  const failure = url instanceof Error ? `Failed to decrypt URL: ${url.message}` : auth instanceof Error ? `Failed to decrypt auth header: ${auth.message}` : undefined;
  if (failure !== undefined) {
    const dead = await agentMarkDead(ctx.db.pool, row.id, agentId, failure);
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
  return {
    id: row.id,
    subscription_id: row.subscription_id,
    event_type: row.event_type,
    payload: row.payload,
    url: url as string,
    auth_header: auth as string | null,
    timeout_seconds: row.timeout_seconds,
    max_retries: row.max_retries,
    attempts: row.attempts,
  };
}

export const webhookAgentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:agent_id/webhooks/pending',
    summary: 'Claim up to 10 webhook deliveries this agent must send (target_labels all on the agent)',
    description: 'Each returned delivery is leased to the agent for 60 s; report it with POST /webhook-deliveries/{id}/result.',
    tags: ['webhooks'],
    access: 'any',
    params: z.object({ agent_id: uuid() }),
    responses: {
      200: { description: 'Claimed deliveries, with the decrypted URL and auth header', schema: pendingDeliverySchema.array() },
      403: { description: 'agent_pak_mismatch', schema: errorResponse },
      404: { description: 'agent_not_found', schema: errorResponse },
    },
    async handler({ params, identity, ctx }) {
      const agentId = params.agent_id;
      if (!identity.admin && identity.agent !== agentId) throw forbidden('agent_pak_mismatch', 'Must be the agent or an admin');
      const { rows } = await ctx.db.pool.query<{ status: string }>('SELECT status FROM agents WHERE id = $1 AND deleted_at IS NULL', [agentId]);
      const agent = rows[0];
      if (!agent) throw notFound('agent_not_found', 'Agent not found');
      // Inactive agents get no work (DESIGN §4); their deliveries wait for an active agent.
      if (agent.status !== 'ACTIVE') return json(200, []);
      const claimed = await claimForAgent(ctx.db.pool, agentId, CLAIM_LIMIT);
      const pending: Pending[] = [];
      for (const row of claimed) {
        const item = await toPending(ctx, agentId, row);
        if (item) pending.push(item);
      }
      return json(200, pending);
    },
  }),
];

import { z } from 'zod';
import { bypassSchema, newBypassSchema } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams, uuid } from '../../http/schemas.ts';
import { errorKind } from '../../errors/api-error.ts';
import { fetchManagedWindow } from './access.ts';
import { wakeSelectedAgents } from './routes.ts';
import { createBypass } from './sql/create-bypass.ts';
import { endBypass } from './sql/end-bypass.ts';
import { liveBypasses } from './sql/queries.ts';
import { bypassJson } from './sql/window-row.ts';
import { checkedExpiry, invalidBypass } from './validation.ts';

const tags = ['maintenance-windows'];
const bypassNotFound = errorKind(404, 'bypass_not_found', 'The window has no bypass in force with this id');

/**
 * Emergency bypasses: lift a window for everyone it selects, for at most 24 hours, with a
 * reason. Whoever may manage the window may bypass it; every bypass and every early end is
 * audited, and both wake the window's agents, whose schedule then shows it (bypassed_until).
 */
export const maintenanceBypassRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/maintenance-windows/:id/bypasses',
    summary: 'Bypass a maintenance window until expires_at (at most 24 h ahead), with a reason',
    tags,
    access: 'any',
    params: idParams,
    body: newBypassSchema,
    responses: { 201: { description: 'The bypass', schema: bypassSchema } },
    errors: [fetchManagedWindow, invalidBypass],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const expiresAt = checkedExpiry(body.expires_at);
      const createdBy = identity.admin ? 'admin' : identity.generator!;
      const bypass = await ctx.transact(async (tx) => {
        const window = await fetchManagedWindow(tx.client, identity, params.id, true);
        const row = await createBypass(tx.client, { windowId: window.id, reason: body.reason, createdBy, expiresAt });
        await wakeSelectedAgents(tx, window.agent_labels);
        return row;
      });
      await ctx.audit({
        actor: identity,
        action: 'maintenance_window.bypass_created',
        resourceType: 'maintenance_window',
        resourceId: params.id,
        details: { bypass_id: bypass.id, reason: body.reason, expires_at: expiresAt },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, bypassJson(bypass));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/maintenance-windows/:id/bypasses',
    summary: "A window's bypasses in force",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The bypasses, soonest to expire first', schema: bypassSchema.array() } },
    errors: [fetchManagedWindow],
    async handler({ params, identity, ctx }) {
      const window = await fetchManagedWindow(ctx.db.pool, identity, params.id);
      return json(200, (await liveBypasses(ctx.db.pool, [window.id])).map(bypassJson));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/maintenance-windows/:id/bypasses/:bypass_id',
    summary: 'End a bypass early (the window applies again)',
    tags,
    access: 'any',
    params: z.object({ id: uuid(), bypass_id: uuid() }),
    responses: { 200: { description: 'The bypass, ended', schema: bypassSchema } },
    errors: [fetchManagedWindow, bypassNotFound],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      const ended = await ctx.transact(async (tx) => {
        const window = await fetchManagedWindow(tx.client, identity, params.id, true);
        const row = await endBypass(tx.client, window.id, params.bypass_id);
        if (!row) throw bypassNotFound();
        await wakeSelectedAgents(tx, window.agent_labels);
        return row;
      });
      await ctx.audit({
        actor: identity,
        action: 'maintenance_window.bypass_ended',
        resourceType: 'maintenance_window',
        resourceId: params.id,
        details: { bypass_id: ended.id },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, bypassJson(ended));
    },
  }),
];

import { maintenanceWindowSchema, maintenanceWindowUpdateSchema, newMaintenanceWindowSchema } from '@brokkr/contracts';
import type { Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import type { TxScope } from '../../events/transact.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { errorKind } from '../../errors/api-error.ts';
import { confineScope, fetchManagedWindow, requireWindowManager } from './access.ts';
import { createWindow } from './sql/create-window.ts';
import { deleteWindow } from './sql/delete-window.ts';
import { agentsWithLabels, countOwnedWindows, listWindows, liveBypasses } from './sql/queries.ts';
import { updateWindow } from './sql/update-window.ts';
import { windowJson, type WindowRow } from './sql/window-row.ts';
import { checkedFields, invalidWindow } from './validation.ts';

const tags = ['maintenance-windows'];
const MAX_WINDOWS_PER_GENERATOR = 100;
const tooManyWindows = errorKind(409, 'too_many_maintenance_windows', 'The generator holds the most maintenance windows it may');

/** Every agent the window selects, before and after a change, reads its schedule again. */
export async function wakeSelectedAgents(tx: TxScope, ...labelSets: string[][]): Promise<void> {
  const agents = new Set<string>();
  for (const labels of labelSets) for (const id of await agentsWithLabels(tx.client, labels)) agents.add(id);
  tx.notifyAgents([...agents]);
}

interface Caller {
  ctx: ApiContext;
  identity: Identity;
  clientIp: string | null;
  userAgent: string | null;
}

async function audit({ ctx, identity, clientIp, userAgent }: Caller, action: string, row: WindowRow) {
  await ctx.audit({
    actor: identity,
    action: `maintenance_window.${action}`,
    resourceType: 'maintenance_window',
    resourceId: row.id,
    details: { name: row.name, type: row.type, rrule: row.rrule, duration_seconds: row.duration_seconds, agent_labels: row.agent_labels },
    ipAddress: clientIp,
    userAgent,
  });
}

/**
 * Maintenance windows (not a Brokkr endpoint; docs/maintenance-windows.md): when the agents a
 * window selects may change their clusters. The admin manages every window, a generator its own
 * (confined to its own stacks); every change wakes the agents the window selects, which read it
 * with their grants (domain/grants.ts) and enforce it themselves.
 */
export const maintenanceWindowRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/maintenance-windows',
    summary: 'Create a maintenance window',
    tags,
    access: 'any',
    body: newMaintenanceWindowSchema,
    responses: { 201: { description: 'The window', schema: maintenanceWindowSchema } },
    errors: [requireWindowManager, confineScope, invalidWindow, tooManyWindows],
    async handler({ body, identity, ctx, clientIp, userAgent }) {
      const owner = requireWindowManager(identity);
      const fields = checkedFields(body);
      const row = await ctx.transact(async (tx) => {
        if (owner && (await countOwnedWindows(tx.client, owner)) >= MAX_WINDOWS_PER_GENERATOR) throw tooManyWindows();
        const created = await createWindow(tx.client, await confineScope(tx.client, owner, fields), owner ?? null);
        await wakeSelectedAgents(tx, created.agent_labels);
        return created;
      });
      await audit({ ctx, identity, clientIp, userAgent }, 'created', row);
      return json(201, windowJson(row, []));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/maintenance-windows',
    summary: 'List maintenance windows (a generator: its own), with their bypasses in force',
    tags,
    access: 'any',
    responses: { 200: { description: 'The windows, oldest first', schema: maintenanceWindowSchema.array() } },
    errors: [requireWindowManager],
    async handler({ identity, ctx }) {
      const rows = await listWindows(ctx.db.pool, requireWindowManager(identity));
      const bypasses = await liveBypasses(
        ctx.db.pool,
        rows.map((r) => r.id),
      );
      return json(
        200,
        rows.map((r) => windowJson(r, bypasses)),
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/maintenance-windows/:id',
    summary: 'Get a maintenance window, with its bypasses in force',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The window', schema: maintenanceWindowSchema } },
    errors: [fetchManagedWindow],
    async handler({ params, identity, ctx }) {
      const row = await fetchManagedWindow(ctx.db.pool, identity, params.id);
      return json(200, windowJson(row, await liveBypasses(ctx.db.pool, [row.id])));
    },
  }),

  defineRoute({
    method: 'patch',
    path: '/maintenance-windows/:id',
    summary: 'Change a maintenance window (the fields given)',
    tags,
    access: 'any',
    params: idParams,
    body: maintenanceWindowUpdateSchema,
    responses: { 200: { description: 'The window', schema: maintenanceWindowSchema } },
    errors: [fetchManagedWindow, confineScope, invalidWindow],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const owner = requireWindowManager(identity);
      const row = await ctx.transact(async (tx) => {
        const stored = await fetchManagedWindow(tx.client, identity, params.id, true);
        // A generator's window naming stacks now no longer covers all of the generator's stacks.
        const scope = owner && body.stack_ids?.length && !body.generator_ids ? { generator_ids: [] } : {};
        const merged = newMaintenanceWindowSchema.parse({ ...storedInput(stored), ...scope, ...body });
        const updated = await updateWindow(tx.client, stored.id, await confineScope(tx.client, owner, checkedFields(merged)));
        await wakeSelectedAgents(tx, stored.agent_labels, updated.agent_labels);
        return updated;
      });
      await audit({ ctx, identity, clientIp, userAgent }, 'updated', row);
      return json(200, windowJson(row, await liveBypasses(ctx.db.pool, [row.id])));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/maintenance-windows/:id',
    summary: 'Delete a maintenance window (and its bypasses)',
    tags,
    access: 'any',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [fetchManagedWindow],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      const row = await ctx.transact(async (tx) => {
        const stored = await fetchManagedWindow(tx.client, identity, params.id, true);
        await deleteWindow(tx.client, stored.id);
        await wakeSelectedAgents(tx, stored.agent_labels);
        return stored;
      });
      await audit({ ctx, identity, clientIp, userAgent }, 'deleted', row);
      return noContent();
    },
  }),
];

/** A stored window as the body that would create it, for a PATCH to merge into. */
function storedInput(row: WindowRow) {
  const { id: _id, owner_generator_id: _owner, created_at: _c, updated_at: _u, duration_seconds, ...rest } = row;
  return { ...rest, duration: duration_seconds };
}

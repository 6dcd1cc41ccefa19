import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import { writeOnce } from '../../events/write-once.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import { logEntryNotFound, workOrderNotFound } from './access.ts';
import { workOrderInput } from './input.ts';
import { newWorkOrderSchema, workOrderListQuery, workOrderLogQuery, workOrderLogSchema, workOrderSchema } from './schemas.ts';
import { CREATED_DATA_KEYS, insertWorkOrder } from './sql/create-work-order.ts';
import { deleteWorkOrder } from './sql/delete-work-order.ts';
import { findLogEntry, findWorkOrder, listLogEntries, listWorkOrders } from './sql/queries.ts';
import type { WorkOrderLogRow } from '../../domain/work-order-row.ts';

const tags = ['work-orders'];

/** GET /work-orders/{id} of an order that left the queue: a WorkOrder synthesized from its log entry. */
function fromLog(entry: WorkOrderLogRow) {
  return {
    id: entry.id,
    created_at: entry.created_at,
    updated_at: entry.completed_at,
    work_type: entry.work_type,
    yaml_content: entry.yaml_content,
    status: entry.success ? 'COMPLETED' : 'FAILED',
    claimed_by: entry.claimed_by,
    claimed_at: entry.claimed_at,
    claim_timeout_seconds: 0,
    max_retries: 0,
    retry_count: entry.retries_attempted,
    backoff_seconds: 0,
    next_retry_after: null,
    last_error: entry.success ? null : entry.result_message,
    last_error_at: entry.success ? null : entry.completed_at,
  };
}

/** The admin side of work orders: the queue and the permanent log. */
export const workOrderRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/work-orders',
    summary: 'Active work orders (PENDING, CLAIMED, RETRY_PENDING), newest first',
    tags,
    access: 'admin',
    query: workOrderListQuery,
    responses: { 200: { description: 'Work orders', schema: workOrderSchema.array() } },
    async handler({ query, ctx }) {
      return json(200, await listWorkOrders(ctx.db.pool, { status: query.status, workType: query.work_type }));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/work-orders',
    summary: 'Create a work order (PENDING) for the agents it targets',
    description:
      'Targeting is OR-combined: explicit agent ids (`targeting.agent_ids` and the legacy `target_agent_ids`, merged), ' +
      'any shared label, any shared annotation. Labels and annotations that are blank, longer than 64 characters or ' +
      'contain whitespace are dropped. The targeted agents are woken (`brokkr.notify.agent.<id>`).',
    tags,
    access: 'admin',
    body: newWorkOrderSchema,
    responses: { 201: { description: 'The work order', schema: workOrderSchema } },
    errors: [workOrderInput, foreignKeyViolation],
    async handler({ body, identity, ctx, clientIp, userAgent }) {
      const fields = workOrderInput(body);
      const event = statementEvent('workorder.created');
      const order = await writeOnce(ctx, async (w) => {
        const created = await insertWorkOrder(w.db, fields, event);
        w.inserted(statementOutboxRow(event, created.eventData, CREATED_DATA_KEYS));
        w.notifyAgents(created.targetedAgents, { work_order_id: created.order.id });
        return created.order;
      });
      await ctx.audit({
        actor: identity,
        action: 'workorder.created',
        resourceType: 'work_order',
        resourceId: order.id,
        details: { work_type: order.work_type },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, order);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/work-orders/:id',
    summary: 'A work order; once it left the queue, COMPLETED/FAILED read back from the log',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The work order', schema: workOrderSchema } },
    errors: [workOrderNotFound],
    async handler({ params, ctx }) {
      const order = await findWorkOrder(ctx.db.pool, params.id);
      if (order) return json(200, order);
      const entry = await findLogEntry(ctx.db.pool, params.id);
      if (!entry) throw workOrderNotFound();
      return json(200, fromLog(entry));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/work-orders/:id',
    summary: 'Delete an active work order (not audited, nothing logged)',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [workOrderNotFound],
    async handler({ params, ctx }) {
      if (!(await deleteWorkOrder(ctx.db.pool, params.id))) throw workOrderNotFound();
      return noContent();
    },
  }),

  defineRoute({
    method: 'get',
    path: '/work-order-log',
    summary: 'Finished work orders, newest completion first',
    tags,
    access: 'admin',
    query: workOrderLogQuery,
    responses: { 200: { description: 'Log entries', schema: workOrderLogSchema.array() } },
    async handler({ query, ctx }) {
      return json(
        200,
        await listLogEntries(ctx.db.pool, {
          workType: query.work_type,
          success: query.success,
          agentId: query.agent_id,
          limit: query.limit,
        }),
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/work-order-log/:id',
    summary: 'One finished work order',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The log entry', schema: workOrderLogSchema } },
    errors: [logEntryNotFound],
    async handler({ params, ctx }) {
      const entry = await findLogEntry(ctx.db.pool, params.id);
      if (!entry) throw logEntryNotFound();
      return json(200, entry);
    },
  }),
];

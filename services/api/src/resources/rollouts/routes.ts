import { z } from 'zod';
import { ROLLOUT_STATUSES, type RolloutStatus } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { errorKind } from '../../errors/api-error.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { fetchOwnedRollout } from './access.ts';
import { unapprovedWaves } from './approvals.ts';
import { fleetRolloutSchema, rolloutSchema } from './schemas.ts';
import { rolloutJson } from './serialize.ts';
import { approvalCounts, listFleetRollouts, listStackRollouts, rolloutAgentIds, waveCounts } from './sql/queries.ts';
import { transitionRollout } from './sql/transition-rollout.ts';

const tags = ['rollouts'];
const rolloutsReaderRequired = errorKind(403, 'rollouts_not_accessible', 'Rollouts are for admins and generators');
export const transitionConflict = errorKind(409, 'rollout_state_conflict', 'The rollout is not in a state this action applies to');
const promoteNeedsApprovals = errorKind(
  403,
  'approval_required',
  'Waves that need approvals lack them: only an admin may promote past them (or approve them first)',
);

interface Transition {
  action: 'pause' | 'resume' | 'abort' | 'promote';
  from: readonly RolloutStatus[];
  to: RolloutStatus;
  event: 'rollout.paused' | 'rollout.resumed' | 'rollout.aborted' | 'rollout.promoted';
  summary: string;
  /** Whether what the rollout's agents are served changes (they are woken). */
  wakes: boolean;
}

// Aborting or promoting a failed rollout is how an operator settles it either way.
const TRANSITIONS: readonly Transition[] = [
  {
    action: 'pause',
    from: ['pending', 'progressing'],
    to: 'paused',
    event: 'rollout.paused',
    summary: 'Pause: no further wave is released',
    wakes: false,
  },
  {
    action: 'resume',
    from: ['paused'],
    to: 'progressing',
    event: 'rollout.resumed',
    summary: "Resume a paused rollout (the wave's deadline and soak restart)",
    wakes: false,
  },
  {
    action: 'abort',
    from: ['pending', 'progressing', 'paused', 'failed'],
    to: 'aborted',
    event: 'rollout.aborted',
    summary: 'Abort: every agent is served the previous deployment object again',
    wakes: true,
  },
  {
    action: 'promote',
    from: ['pending', 'progressing', 'paused', 'failed'],
    to: 'promoted',
    event: 'rollout.promoted',
    summary: 'Promote: every agent is served the new deployment object now',
    wakes: true,
  },
];

function transitionRoute(t: Transition) {
  return defineRoute({
    method: 'post',
    path: `/rollouts/:id/${t.action}`,
    summary: t.summary,
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The rollout after the action', schema: rolloutSchema } },
    errors:
      t.action === 'promote' ? [fetchOwnedRollout, transitionConflict, promoteNeedsApprovals] : [fetchOwnedRollout, transitionConflict],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      const row = await ctx.transact(async (tx) => {
        const current = await fetchOwnedRollout(tx.client, identity, params.id, true);
        // Promoting serves every wave now: past an approval gate only for an admin (audited), never the stack's owner alone.
        if (t.action === 'promote' && !identity.admin) {
          const missing = unapprovedWaves(current.policy.waves, current.released_wave, await approvalCounts(tx.client, [current.id]));
          if (missing.length) throw promoteNeedsApprovals({ waves: missing });
        }
        const message = `${t.action} by ${identity.admin ? 'an admin' : 'the stack owner'}`;
        const changed = await transitionRollout(tx.client, params.id, { from: t.from, to: t.to, message });
        if (!changed) throw transitionConflict({ status: current.status, allowed_from: t.from });
        tx.emit(t.event, {
          rollout_id: changed.id,
          stack_id: changed.stack_id,
          deployment_object_id: changed.deployment_object_id,
        });
        if (t.wakes) tx.notifyAgents(await rolloutAgentIds(tx.client, changed.id));
        return changed;
      });
      await ctx.audit({
        actor: identity,
        action: `rollout.${t.action}`,
        resourceType: 'stack',
        resourceId: row.stack_id,
        details: { rollout_id: row.id, status: row.status },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, rolloutJson(row, await waveCounts(ctx.db.pool, [row.id]), await approvalCounts(ctx.db.pool, [row.id])));
    },
  });
}

/** `?status=failed,rolled_back`: a comma-separated list of rollout statuses. */
const statusList = z
  .string()
  .transform((s) => s.split(',').filter(Boolean))
  .pipe(z.array(z.enum(ROLLOUT_STATUSES)).min(1))
  .optional();

export const rolloutRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/rollouts',
    summary: 'Rollouts across the fleet, newest first: every stack (admin) or your own stacks (generator)',
    tags,
    access: 'any',
    query: z.object({ status: statusList, limit: z.coerce.number().int().min(1).max(500).default(100) }),
    responses: { 200: { description: 'Rollouts with their stack names', schema: fleetRolloutSchema.array() } },
    errors: [rolloutsReaderRequired],
    async handler({ query, identity, ctx }) {
      if (!identity.admin && identity.generator === null) throw rolloutsReaderRequired();
      const rows = await listFleetRollouts(ctx.db.pool, {
        generatorId: identity.admin ? null : identity.generator,
        statuses: query.status ?? null,
        limit: query.limit,
      });
      const ids = rows.map((r) => r.id);
      const [counts, approvals] = await Promise.all([waveCounts(ctx.db.pool, ids), approvalCounts(ctx.db.pool, ids)]);
      return json(
        200,
        rows.map((r) => rolloutJson(r, counts, approvals)),
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/rollouts',
    summary: "A stack's rollouts, newest first",
    tags,
    access: 'any',
    params: idParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }),
    responses: { 200: { description: 'Rollouts', schema: rolloutSchema.array() } },
    errors: [fetchOwnedStack],
    async handler({ params, query, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const rows = await listStackRollouts(ctx.db.pool, params.id, query.limit);
      const ids = rows.map((r) => r.id);
      const [counts, approvals] = await Promise.all([waveCounts(ctx.db.pool, ids), approvalCounts(ctx.db.pool, ids)]);
      return json(
        200,
        rows.map((r) => rolloutJson(r, counts, approvals)),
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/rollouts/:id',
    summary: 'A rollout: status, released wave, per-wave agent counts',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The rollout', schema: rolloutSchema } },
    errors: [fetchOwnedRollout],
    async handler({ params, identity, ctx }) {
      const row = await fetchOwnedRollout(ctx.db.pool, identity, params.id);
      return json(200, rolloutJson(row, await waveCounts(ctx.db.pool, [row.id]), await approvalCounts(ctx.db.pool, [row.id])));
    },
  }),

  ...TRANSITIONS.map(transitionRoute),
];

import { z } from 'zod';
import type { Queryable } from '@brokkr/db';
import type { RolloutWave } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { errorKind } from '../../errors/api-error.ts';
import { uuid } from '../../http/schemas.ts';
import type { Identity } from '../../auth/identity.ts';
import { fetchApprovableRollout, fetchRolloutForApproval } from './access.ts';
import { approvalRefusal, approvalRule, approverName } from './approvals.ts';
import { transitionConflict } from './routes.ts';
import { approvalRequestSchema, rolloutApprovalRequestSchema, waveApprovalsSchema } from './schemas.ts';
import type { ApprovalRow } from './sql/approval-row.ts';
import {
  approvalCounts,
  listApprovableRollouts,
  listWaveApprovals,
  rolloutDigest,
  rolloutSubmitter,
  waveAgentIds,
  type ApprovableRolloutRow,
} from './sql/queries.ts';
import { recordApproval } from './sql/record-approval.ts';
import { releaseApprovedWave } from './sql/release-approved-wave.ts';
import type { RolloutRow } from './sql/rollout-row.ts';

const tags = ['rollouts'];
const waveNotFound = errorKind(404, 'rollout_wave_not_found', 'The rollout has no such wave');
const approvalNotRequired = errorKind(409, 'approval_not_required', 'This wave requires no approvals');
const waveReleased = errorKind(409, 'rollout_wave_released', 'The wave is released already');
const approvalBySubmitter = errorKind(403, 'approval_by_submitter', 'Whoever submitted the deployment object may not approve its rollout');
const approverNotAllowed = errorKind(403, 'approver_not_allowed', 'This identity is not an approver of the wave');
const digestMismatch = errorKind(409, 'approval_digest_mismatch', 'The wave would ship something other than the digest approved');

/** A rollout stays open to approvals while it may still release a wave. */
const OPEN_STATUSES = ['pending', 'progressing', 'paused'] as const;

const waveParams = z.object({ id: uuid(), wave: z.coerce.number().int().min(0).max(19) });

function waveOf(row: RolloutRow, index: number): RolloutWave {
  const wave = row.policy.waves[index];
  if (!wave) throw waveNotFound({ waves: row.policy.waves.length });
  return wave;
}

function approvalJson(a: ApprovalRow) {
  const { id, rollout_id, wave, digest, approver_type, approver_id, comment, created_at, expires_at, counts } = a;
  return { id, rollout_id, wave, digest, approver_type, approver_id, comment, created_at, expires_at, counts };
}

/** The WaveApprovals answer, read after the write (or on GET) so it is what the table holds. */
async function waveApprovals(db: Queryable, row: RolloutRow, index: number) {
  const [digest, counts, approvals] = await Promise.all([
    rolloutDigest(db, row.id),
    approvalCounts(db, [row.id]),
    listWaveApprovals(db, row.id, index),
  ]);
  return {
    rollout_id: row.id,
    wave: index,
    name: waveOf(row, index).name,
    digest,
    required_approvals: approvalRule(waveOf(row, index)).required,
    approvals_counted: counts.find((c) => c.wave === index)?.approvals ?? 0,
    released: index <= row.released_wave,
    awaiting_approval: row.approval_wave === index,
    approvals: approvals.map(approvalJson),
  };
}

/** Every check an approval passes, in the order their errors are documented; the rollout is locked. */
async function checkApproval(db: Queryable, ask: { row: RolloutRow; index: number; identity: Identity; digest: string | undefined }) {
  const { row, index, identity, digest } = ask;
  const rule = approvalRule(waveOf(row, index));
  if (rule.required === 0) throw approvalNotRequired();
  const refusal = approvalRefusal(identity, rule.approvers, await rolloutSubmitter(db, row.id));
  if (refusal === 'submitter') throw approvalBySubmitter();
  if (refusal === 'not_approver') throw approverNotAllowed();
  if (!(OPEN_STATUSES as readonly string[]).includes(row.status))
    throw transitionConflict({ status: row.status, allowed_from: OPEN_STATUSES });
  if (index <= row.released_wave) throw waveReleased({ released_wave: row.released_wave });
  const current = await rolloutDigest(db, row.id);
  if (digest !== undefined && digest !== current) throw digestMismatch({ digest: current });
  return { rule, digest: current };
}

/** The waves of one rollout `identity` may approve now (not released, needing approvals, not its own object). */
function requestsOf(
  row: ApprovableRolloutRow,
  identity: Identity,
  counts: readonly { rollout_id: string; wave: number; approvals: number }[],
) {
  return row.policy.waves.flatMap((wave, index) => {
    const rule = approvalRule(wave);
    if (rule.required === 0 || index <= row.released_wave || approvalRefusal(identity, rule.approvers, row.submitter) !== null) return [];
    const counted = counts.find((c) => c.rollout_id === row.id && c.wave === index)?.approvals ?? 0;
    return [
      {
        rollout_id: row.id,
        stack_id: row.stack_id,
        stack_name: row.stack_name,
        deployment_object_id: row.deployment_object_id,
        status: row.status,
        wave: index,
        name: wave.name,
        digest: row.digest,
        required_approvals: rule.required,
        approvals_counted: counted,
        awaiting_approval: row.approval_wave === index,
        approvers: [...rule.approvers],
      },
    ];
  });
}

/**
 * Approvals of a rollout's waves (not a Brokkr feature; docs/rollouts.md, "Approvals"). An approval
 * is bound to the rollout, the wave and the digest of what the wave ships; the one that completes
 * the count of a wave the rollout waits at releases it in the same transaction.
 */
export const rolloutApprovalRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/approval-requests',
    summary:
      'Waves of open rollouts the caller may approve (an admin: every one needing approvals; a generator: those listing it), newest first',
    tags,
    access: 'any',
    query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }),
    responses: { 200: { description: 'Waves to approve', schema: approvalRequestSchema.array() } },
    errors: [approverNotAllowed],
    async handler({ query, identity, ctx }) {
      if (approverName(identity) === null) throw approverNotAllowed();
      const rows = await listApprovableRollouts(ctx.db.pool, identity.admin ? null : identity.generator, query.limit);
      const counts = await approvalCounts(
        ctx.db.pool,
        rows.map((r) => r.id),
      );
      return json(
        200,
        rows.flatMap((r) => requestsOf(r, identity, counts)),
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/rollouts/:id/waves/:wave/approvals',
    summary: "A rollout wave's approvals: who, when, until when, the digest each is bound to, and whether it counts",
    tags,
    access: 'any',
    params: waveParams,
    responses: { 200: { description: "The wave's approvals", schema: waveApprovalsSchema } },
    errors: [fetchApprovableRollout, waveNotFound],
    async handler({ params, identity, ctx }) {
      const row = await fetchApprovableRollout(ctx.db.pool, identity, params.id);
      waveOf(row, params.wave);
      return json(200, await waveApprovals(ctx.db.pool, row, params.wave));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/rollouts/:id/waves/:wave/approvals',
    summary: 'Approve what a rollout wave will ship (an admin, or a generator the wave lists; never the submitter)',
    description:
      'Checks, in order: the rollout (404 `rollout_not_found`) and wave (404 `rollout_wave_not_found`), that the wave needs ' +
      'approvals (409 `approval_not_required`), the caller (403 `approval_by_submitter`, 403 `approver_not_allowed`), the ' +
      "rollout's state (409 `rollout_state_conflict`, 409 `rollout_wave_released`) and, when given, the digest reviewed (409 " +
      '`approval_digest_mismatch`, details.digest the current one). Approving again renews the approval.',
    tags,
    access: 'any',
    params: waveParams,
    body: rolloutApprovalRequestSchema.optional(),
    bodyMode: 'optional-json',
    responses: { 201: { description: "The wave's approvals after this one", schema: waveApprovalsSchema } },
    errors: [
      fetchRolloutForApproval,
      waveNotFound,
      approvalNotRequired,
      approvalBySubmitter,
      approverNotAllowed,
      transitionConflict,
      waveReleased,
      digestMismatch,
    ],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const result = await ctx.transact(async (tx) => {
        const row = await fetchRolloutForApproval(tx.client, params.id);
        const { rule, digest } = await checkApproval(tx.client, { row, index: params.wave, identity, digest: body?.digest });
        const approval = await recordApproval(tx.client, {
          rolloutId: row.id,
          wave: params.wave,
          digest,
          approverType: identity.admin ? 'admin' : 'generator',
          approverId: identity.admin ? null : identity.generator,
          comment: body?.comment ?? null,
          ttlSeconds: rule.ttlSeconds,
        });
        const counted = (await approvalCounts(tx.client, [row.id])).find((c) => c.wave === params.wave)?.approvals ?? 0;
        const released = counted >= rule.required ? await releaseApprovedWave(tx.client, row.id, params.wave) : undefined;
        if (released) {
          const agents = await waveAgentIds(tx.client, row.id, params.wave);
          tx.emit('rollout.wave_started', {
            rollout_id: row.id,
            stack_id: row.stack_id,
            deployment_object_id: row.deployment_object_id,
            wave: params.wave,
            name: waveOf(row, params.wave).name,
            agents: agents.length,
          });
          tx.notifyAgents(agents);
        }
        return { row: released ?? row, approval, counted, released: released !== undefined };
      });
      await ctx.audit({
        actor: identity,
        action: 'rollout.approved',
        resourceType: 'stack',
        resourceId: result.row.stack_id,
        details: {
          rollout_id: result.row.id,
          wave: params.wave,
          digest: result.approval.digest,
          approvals: result.counted,
          released: result.released,
        },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, await waveApprovals(ctx.db.pool, result.row, params.wave));
    },
  }),
];

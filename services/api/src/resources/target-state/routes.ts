import { z } from 'zod';
import { servedObjectSchema, stackSchema } from '@brokkr/contracts';
import { defineRoute, json, type AnyRoute, type Reply } from '../../http/route.ts';
import { idParams, longPollWait, queryBool } from '../../http/schemas.ts';
import { clientGone } from '../../http/client-gone.ts';
import { servesBrokkrRustAgent } from '../../compat/brokkr-agent/detect.ts';
import { tooManyStreams } from '../../limits/stream-quota.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import type { AnswerBytes } from '../../delivery/target-state/answer-bytes.ts';
import { answerTargetState, type TargetStateAnswer } from './long-poll.ts';
import { queryAgentStacks } from './sql/agent-stacks.ts';

const targetStateQuery = z.object({
  mode: z
    .unknown()
    .optional()
    .meta({ type: 'string', description: '`full` includes objects already applied; anything else is incremental' }),
  wait: longPollWait(
    'Long-poll: with If-None-Match, hold the request up to this many seconds (capped by BROKKR__BROKER__LONG_POLL_MAX_SECONDS)',
  ),
  signatures: queryBool().optional().meta({
    description:
      'For an agent that checks signatures (docs/signatures.md): each object carries the newest signature stored for its content (`signature`), and the ETag covers them',
  }),
});

/**
 * The answer, and how often an agent that polls should ask again when the operator set it: a fleet
 * whose agents poll can be slowed down from the hub (after a restart of the api, say), without
 * reconfiguring every agent.
 */
function reply(answer: Exclude<TargetStateAnswer, { status: 'aborted' }>, pollSeconds: number, bytes: AnswerBytes): Reply {
  const headers: Record<string, string> = { ETag: answer.etag, 'Brokkr-Grants': answer.grants };
  if (pollSeconds > 0) headers['Brokkr-Poll-Interval'] = String(pollSeconds);
  if (answer.status === 304) return { status: 304, headers };
  // The same bytes for every agent with the same answer (delivery/target-state/answer-bytes.ts).
  return { status: 200, body: bytes.answer(answer.body, answer.carried), contentType: JSON_UTF8, headers };
}

const JSON_UTF8 = 'application/json; charset=utf-8';

/** What an agent receives: its target state (with the long-poll extension) and its associated stacks. */
export const targetStateRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/target-state',
    summary: "The agent's desired deployment objects (latest per associated stack, newest first)",
    description:
      'Incremental by default: objects the agent reported SUCCESS for are left out (failures are served again). ' +
      'An inactive agent gets `[]`. A deleted stack serves its deletion marker until the agent reports an event for it. ' +
      'Long-poll extension: send the `ETag` of the state you hold as `If-None-Match` → 304 when unchanged; ' +
      'add `wait=<seconds>` to be held until the state changes (200) or the wait ends (304).',
    tags: ['agents'],
    access: 'any',
    params: idParams,
    query: targetStateQuery,
    responses: {
      200: {
        description:
          "Deployment objects (header `ETag`; `Brokkr-Grants`: a digest of the agent's grants, which changes whenever GET /agents/{id}/grants would answer differently; `Brokkr-Poll-Interval`: seconds until a polling agent should ask again, when the hub sets it)",
        schema: servedObjectSchema.array(),
      },
      304: { description: 'Unchanged since If-None-Match (headers `ETag`, `Brokkr-Grants`, `Brokkr-Poll-Interval`)' },
    },
    errors: [requireAdminOrSelf, tooManyStreams],
    async handler({ params, query, identity, ctx, req, res }) {
      requireAdminOrSelf(identity, params.id);
      const ifNoneMatch = req.headers['if-none-match'];
      const waitSeconds = Math.min(Number(query.wait ?? 0), ctx.settings.longPollMaxSeconds);
      const waits = ifNoneMatch !== undefined && waitSeconds > 0;
      // A request that may be held counts against its PAK's long-polls until it is answered.
      const release = waits ? ctx.streams.require('long_poll', identity) : undefined;
      const answer = await answerTargetState(ctx.targetStates, waits ? ctx.waiters : undefined, {
        agentId: params.id,
        // Brokkr's own agent gets the full state: it deletes whatever the incremental one leaves out (compat/brokkr-agent/).
        full: query.mode === 'full' || servesBrokkrRustAgent(req.headers, identity, params.id, query.mode),
        signatures: query.signatures === true,
        waitSeconds,
        ifNoneMatch,
        signal: clientGone(res),
        hurry: ctx.shutdownSignal,
      }).finally(release);
      if (answer.status !== 'aborted') return reply(answer, ctx.settings.agentPollSeconds, ctx.targetStates.bytes);
      // Nobody is listening any more; 499 ("client closed request") keeps the metrics honest.
      res.statusCode = 499;
      res.end();
      return undefined;
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/stacks',
    summary: 'The stacks associated with an agent (labels, annotations, targets), sorted by id',
    tags: ['agents'],
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Stacks', schema: stackSchema.array() } },
    errors: [requireAdminOrSelf],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      return json(200, await queryAgentStacks(ctx.db.pool, params.id));
    },
  }),
];

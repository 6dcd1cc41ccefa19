/**
 * Targeting: which stacks (and so which deployment objects) an agent receives, and who must be
 * woken when that changes.
 *
 * For the stacks / deployment-objects routes:
 *   - `agentsForStack(db, stackId, also?)` / `agentsForStacks(db, stackIds, also?)`: the live
 *     agents whose target state depends on the stack(s), in ONE query. Call it inside the write's
 *     transaction (`tx.client`) and pass the result to `tx.notifyAgents(...)`, which publishes
 *     `brokkr.notify.agent.<id>` after commit. Needed for: a new deployment object, a stack label
 *     or annotation added or removed, a stack deleted, a stack's generator changed.
 *     For removals, run it after the DELETE but pass what was removed in `also`
 *     (`{ labels: [label] }`, `{ annotations: [[key, value]] }`, `{ generatorIds: [oldGeneratorId] }`)
 *     so the agents that just lost the stack are woken too. Deleted stacks are included on purpose
 *     (their agents now receive the deletion marker).
 *   - Agent-side changes (labels, annotations, targets, status, events) and registrations made
 *     through /agents are handled by the agents routes. Routes that change registrations elsewhere
 *     (POST/DELETE /generators/{id}/register) wake the agent with `tx.notifyAgents([agentId])`.
 *
 * For the target-state route: `queryTargetState` (one statement, see target-state-sql.ts),
 * `answerTargetState` (long-poll with ETag), `processWakeups` (the per-process dispatcher).
 */
export { agentsForStack, agentsForStacks, type AlsoMatching } from './agents-for-stack.ts';
export { queryTargetState, queryAgentStacks, TARGET_STATE_SQL } from './target-state-sql.ts';
export { answerTargetState, targetStateEtag, ifNoneMatchHits, type TargetStateAnswer, type TargetStateQuery } from './long-poll.ts';
export { AgentWakeups, type AgentWatch, type WaitOutcome } from './wakeups.ts';
export { processWakeups } from './process-wakeups.ts';

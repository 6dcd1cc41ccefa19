import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import type { CachedState, SignedState, TargetStateCache } from '../../delivery/target-state/answer-cache.ts';
import type { Carried } from '../../delivery/target-state/signatures.ts';
import { ifNoneMatchHits } from '../../delivery/target-state/etag.ts';
import { longPollDeadline, type Waiters, type AgentWatch } from '../../delivery/waiters.ts';

/**
 * The long-poll extension of GET /agents/{id}/target-state. Brokkr's agent sends
 * no If-None-Match and gets exactly Brokkr's answer (always 200). A client that sends the ETag
 * of the state it holds gets 304 when nothing changed; with `wait` it is held until a wake-up
 * changes its state or the wait ends.
 */
export interface TargetStateQuery {
  agentId: string;
  full: boolean;
  /** The agent checks signatures (`signatures=true`): each object carries its own, and the ETag covers them. */
  signatures: boolean;
  /** Seconds to hold a request whose state still matches If-None-Match; 0 = answer at once. */
  waitSeconds: number;
  ifNoneMatch: string | undefined;
  /** Aborted when the client goes away: stop, answer nothing. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: stop waiting and answer now. */
  hurry?: AbortSignal;
}

/**
 * `grants`: the digest of the agent's grants (grantsDigest) the answer was read with; `carried`:
 * the signature of each of `body`'s objects, for an agent that asked for them.
 */
export type TargetStateAnswer =
  | { status: 200; etag: string; grants: string; body: DeploymentObjectRow[]; carried?: (Carried | undefined)[] }
  | { status: 304; etag: string; grants: string }
  | { status: 'aborted' };

type State = CachedState | SignedState;

async function readState(cache: TargetStateCache, query: TargetStateQuery): Promise<State> {
  const state = await cache.read(query.agentId, query.full);
  return query.signatures ? cache.withSignatures(state) : state;
}

function changed(state: State): TargetStateAnswer {
  const answer = { status: 200 as const, etag: state.etag, grants: state.grants, body: state.rows };
  return 'carried' in state ? { ...answer, carried: state.carried } : answer;
}

/** Holds a request whose state still matches If-None-Match until it changes or the wait ends. */
async function waitForChange(
  cache: TargetStateCache,
  watch: AgentWatch,
  query: TargetStateQuery,
  ifNoneMatch: string,
): Promise<TargetStateAnswer> {
  const deadline = longPollDeadline(query.waitSeconds);
  const stop = query.hurry ? AbortSignal.any([query.signal, query.hurry]) : query.signal;
  for (;;) {
    const outcome = await watch.next(deadline, stop);
    if (query.signal.aborted) return { status: 'aborted' };
    // Also re-read at the deadline (and at shutdown): hints are lossy, the database is not.
    const state = await readState(cache, query);
    if (!ifNoneMatchHits(ifNoneMatch, state.etag)) return changed(state);
    if (outcome !== 'woken') return { status: 304, etag: state.etag, grants: state.grants };
  }
}

/**
 * `waiters` is needed only for a conditional request with a wait; without one the request never
 * waits.
 */
export async function answerTargetState(
  cache: TargetStateCache,
  waiters: Waiters | undefined,
  query: TargetStateQuery,
): Promise<TargetStateAnswer> {
  const ifNoneMatch = query.ifNoneMatch;
  if (ifNoneMatch === undefined) return changed(await readState(cache, query));
  // Watch before the first read: a change committed between the read and the wait still wakes us.
  const watch = query.waitSeconds > 0 ? waiters?.watch(query.agentId) : undefined;
  try {
    const state = await readState(cache, query);
    if (!ifNoneMatchHits(ifNoneMatch, state.etag)) return changed(state);
    if (!watch) return { status: 304, etag: state.etag, grants: state.grants };
    return await waitForChange(cache, watch, query, ifNoneMatch);
  } finally {
    watch?.close();
  }
}

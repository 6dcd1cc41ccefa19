import type { AgentNotice } from '@brokkr/contracts';
import type { LazyNotice } from '../pipeline.ts';
import type { Queryable } from '@brokkr/db';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import { grantsDigest, queryAgentGrants } from '../../domain/grants.ts';
import { queryStackLatest, type StackLatest } from './sql/stack-latest.ts';
import { queryTargetState } from './sql/target-state.ts';
import { AnswerBytes } from './answer-bytes.ts';
import { SharedRows } from './shared-rows.ts';
import { targetStateEtag } from './etag.ts';
import { ServedSignatures, signedEtag, type Carried } from './signatures.ts';

/** One agent's answer in one mode, as the target-state query gave it (or patched since). */
export interface CachedState {
  etag: string;
  rows: DeploymentObjectRow[];
  /** grantsDigest() of the agent's grants when the rows were read (a new object changes no grant). */
  grants: string;
}

interface Entry extends CachedState {
  expiresAt: number;
  /** Stacks that got a new object since `rows` was read, with what a read of the stack must reflect. */
  pending: Map<string, Need>;
}

/**
 * What a read of a stack must reflect to serve a notice: the object's sequence_id when the notice
 * named it (any read that returns that object or a newer one will do, whenever it started), else
 * the notice's place in this replica's order of notices (only a read started after it will do).
 * A new Need per notice: an entry's pending map changed if and only if one of its values did.
 */
interface Need {
  notice: number;
  object: number | undefined;
}

interface AgentEntries {
  /** Bumped by every notice for the agent: a read that started before it must not be stored. */
  generation: number;
  full?: Entry;
  incremental?: Entry;
}

interface StackPart {
  /** The notice sequence when the read started: it reflects every write noticed up to then. */
  since: number;
  latest: Promise<StackLatest>;
}

/** An answer for an agent that asked for signatures: `carried[i]` is the signature of `rows[i]`, the ETag covers them. */
export interface SignedState extends CachedState {
  carried: (Carried | undefined)[];
}

/**
 * What a hint can carry instead of "fetch": the answer moved from `base` to `etag` by `objects`,
 * one per changed stack; for an agent that asked for signatures, `carried[i]` is the signature of
 * `objects[i]` and both ETags are signedEtag's.
 */
export interface StateStep {
  base: string;
  etag: string;
  objects: DeploymentObjectRow[];
  carried?: (Carried | undefined)[];
}

export interface CacheOutcomes {
  hit(): void;
  patched(): void;
  miss(): void;
  /** One read of a stack's newest object, shared by the answers of every agent that holds it. */
  stackRead(): void;
}

/**
 * A safety net, not the mechanism: every write that changes an agent's target state wakes it
 * (agentsForStacks, tx.notifyAgents) and the wake-up drops or patches its entry; an entry older
 * than this is read again in case some wake-up was lost.
 */
export const TARGET_STATE_TTL_MS = 5 * 60_000;

/** Enough for every agent of a large fleet in both modes; the oldest agent goes first beyond it. */
const MAX_AGENTS = 200_000;

/**
 * Target-state answers of this replica, per agent and mode, kept current by the
 * `brokkr.notify.agent.<id>` wake-ups every replica receives (ADR 0034):
 *
 *   - a notice that says only "a new deployment object in stack S" (`stack_id` alone, sent by
 *     storeDeploymentObject) marks S pending in the agent's entries. The next answer replaces the
 *     entry's row of S with S's newest object, read ONCE per stack for all agents
 *     (sql/stack-latest.ts): a change to a stack held by N agents costs one query, not N (an object
 *     rendered per agent: two, and each agent gets its own render of it). When
 *     that is not plainly "every holder gets the newest object" (a rollout exists for it, the stack
 *     is deleted) or the entry has no row of S (incremental mode after a success, a stack that had
 *     no object), the entry is read again from the target-state query;
 *   - any other notice (events, labels, targets, status, rollout steps …) drops the agent's entries;
 *   - while the wake-ups may have been lost (NATS disconnected, or a slow consumer), nothing is
 *     served from memory, and everything is dropped once they flow again.
 *
 * An If-None-Match that matches a current entry is answered without touching the database.
 */
export class TargetStateCache {
  private readonly agents = new Map<string, AgentEntries>();
  private readonly stacks = new Map<string, StackPart>();
  private sequence = 0;
  private trusted = true;
  private readonly shared = new SharedRows();
  /** The JSON of the answers and rows this cache gives (a long-poll's body, a patch frame's objects). */
  readonly bytes = new AnswerBytes();
  /** The signatures carried to agents that check them, read once per content (signatures.ts). */
  readonly signatures: ServedSignatures;

  constructor(
    private readonly db: Queryable,
    private readonly outcomes: CacheOutcomes,
    private readonly ttlMs: number = TARGET_STATE_TTL_MS,
  ) {
    this.signatures = new ServedSignatures(db, ttlMs);
  }

  /** The delivery's first stage (pipeline.ts): a notice for the agent (lower-case id), from whichever replica the write happened on. */
  noticed(agentId: string, lazy: LazyNotice): void {
    const sequence = ++this.sequence;
    const agent = this.agents.get(agentId);
    if (!agent && this.signatures.empty) return;
    const notice = lazy();
    // A signature stored for content already served: the rows stand, their signatures are read again.
    if (notice.signature && notice.stack_id) return this.signatures.forgetStack(notice.stack_id);
    if (!agent) return;
    agent.generation++;
    if (ownReportOnly(notice)) return dropWhatEventsDecide(agent);
    const stackId = newObjectOnly(notice);
    if (stackId === undefined) {
      this.agents.delete(agentId);
      return;
    }
    for (const entry of [agent.full, agent.incremental])
      entry?.pending.set(stackId, nextNeed(entry.pending.get(stackId), sequence, notice.sequence_id));
  }

  /** Wake-ups may be lost from now on: stop answering from memory. */
  distrust(): void {
    this.trusted = false;
    this.signatures.distrust();
    this.clear();
  }

  /** Wake-ups flow again: start from empty. */
  trust(): void {
    this.clear();
    this.signatures.trust();
    this.trusted = true;
  }

  private clear(): void {
    this.sequence++;
    this.agents.clear();
    this.stacks.clear();
  }

  /** The agent's current target state: from memory when it is known, else from the database. */
  async read(agentId: string, full: boolean, now = Date.now()): Promise<CachedState> {
    const key = agentId.toLowerCase();
    const agent = this.agents.get(key);
    const entry = agent?.[modeKey(full)];
    if (agent && entry && entry.expiresAt > now && this.trusted) {
      if (entry.pending.size === 0) {
        this.outcomes.hit();
        return entry;
      }
      const patched = await this.patch(key, agent, entry, full);
      if (patched) return patched;
    }
    return this.load(key, full, now);
  }

  /**
   * For the agent channel: the agent's full answer moved forward by the stacks noticed since it was
   * read, as one step from the ETag the agent holds (if it fetched it) to the new one. Undefined
   * when this replica has no current entry for it, nothing is pending, or a pending stack is not a
   * plain "newest object for everyone" change: the agent is then hinted to fetch, as before.
   */
  async stepFull(agentId: string, signed = false, now = Date.now()): Promise<StateStep | undefined> {
    const agent = this.agents.get(agentId.toLowerCase());
    const entry = agent?.full;
    if (!agent || !entry || entry.expiresAt <= now || !this.trusted || entry.pending.size === 0) return undefined;
    const stacks = new Set(entry.pending.keys());
    const patched = await this.patch(agentId.toLowerCase(), agent, entry, true);
    if (!patched) return undefined;
    const objects = patched.rows.filter((row) => stacks.has(row.stack_id));
    if (!signed) return { base: entry.etag, etag: patched.etag, objects };
    // The same ETags the agent's fetches were answered with (withSignatures), so the steps chain on them.
    const [base, next] = await Promise.all([this.withSignatures(entry), this.withSignatures(patched)]);
    return { base: base.etag, etag: next.etag, objects, carried: objects.map((row) => next.carried[next.rows.indexOf(row)]) };
  }

  /** The answer as an agent that checks signatures is served it: each row's signature, and an ETag that covers them. */
  async withSignatures(state: CachedState): Promise<SignedState> {
    const carried = await this.signatures.of(state.rows);
    return { ...state, etag: signedEtag(state.etag, carried), carried };
  }

  private async load(key: string, full: boolean, now: number): Promise<CachedState> {
    this.outcomes.miss();
    // The agent's record exists from before the read, so a notice during the read is counted.
    const agent = this.agentRecord(key);
    const generation = agent.generation;
    const [read, grants] = await Promise.all([queryTargetState(this.db, key, full), queryAgentGrants(this.db, key)]);
    const rows = read.map((row) => this.shared.share(row));
    const digest = grantsDigest(grants);
    const state = { rows, grants: digest, etag: targetStateEtag(rows, full, digest) };
    // A notice (or lost wake-ups) during the read may mean the rows are already old: answer, keep nothing.
    if (this.trusted && this.agents.get(key) === agent && agent.generation === generation)
      agent[modeKey(full)] = { ...state, expiresAt: now + this.ttlMs, pending: new Map() };
    return state;
  }

  private agentRecord(key: string): AgentEntries {
    let agent = this.agents.get(key);
    if (!agent) {
      if (this.agents.size >= MAX_AGENTS) this.agents.delete(this.agents.keys().next().value!);
      agent = { generation: 0 };
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** The entry with each pending stack's row replaced by its newest object (its own render of it); undefined: read it instead. */
  private async patch(key: string, agent: AgentEntries, entry: Entry, full: boolean): Promise<CachedState | undefined> {
    const pending = [...entry.pending];
    const parts = await Promise.all(pending.map(([stackId, need]) => this.stackLatest(stackId, need)));
    let rows = entry.rows;
    for (const [i, [stackId]] of pending.entries()) {
      const newest = newestFor(parts[i]!, key);
      const at = rows.findIndex((r) => r.stack_id === stackId);
      if (!newest || at < 0) return undefined;
      rows = rows.with(at, newest);
    }
    rows = rows.toSorted((a, b) => b.sequence_id - a.sequence_id);
    this.outcomes.patched();
    const patched: Entry = {
      rows,
      grants: entry.grants,
      etag: targetStateEtag(rows, full, entry.grants),
      expiresAt: entry.expiresAt,
      pending: new Map(),
    };
    // Only if nothing was noticed meanwhile; else this answer stands for this request alone.
    if (agent[modeKey(full)] === entry && [...entry.pending].every(([s, n]) => pending.some(([p, m]) => p === s && m === n)))
      agent[modeKey(full)] = patched;
    return patched;
  }

  /**
   * The stack's newest object, read once for all the agents whose notices it reflects (Need): the
   * 10,000 notices of one write arrive over a while, and each starts its agent's answer at once.
   */
  private async stackLatest(stackId: string, need: Need): Promise<StackLatest> {
    for (;;) {
      const known = this.stacks.get(stackId);
      if (!known || known.since < need.notice) break;
      const latest = await known.latest;
      if (need.object === undefined || latest.kind === 'per-agent' || sequenceOf(latest) >= need.object) return latest;
      // Read before the object was written; read again, unless another answer already did.
      if (this.stacks.get(stackId) === known) break;
    }
    this.outcomes.stackRead();
    const latest = queryStackLatest(this.db, stackId).then((found) => this.shareRows(found));
    const part: StackPart = { since: this.sequence, latest };
    this.stacks.set(stackId, part);
    // A failed read is not kept: the next answer tries again.
    part.latest.catch(() => this.stacks.get(stackId) === part && this.stacks.delete(stackId));
    return part.latest;
  }

  /** One copy of each row for every answer that holds it (per distinct render, for a rendered object). */
  private shareRows(found: StackLatest): StackLatest {
    if (found.kind === 'plain') return { ...found, row: this.shared.share(found.row) };
    if (found.kind === 'rendered')
      return { kind: 'rendered', rows: new Map([...found.rows].map(([agent, row]) => [agent, this.shared.share(row)])) };
    return found;
  }
}

/** The row an agent holding the stack is served now: the newest object, or its own render of it; undefined: read its answer. */
function newestFor(latest: StackLatest, agentKey: string): DeploymentObjectRow | undefined {
  if (latest.kind === 'plain') return latest.row;
  return latest.kind === 'rendered' ? latest.rows.get(agentKey) : undefined;
}

/** The sequence_id of the newest object a read found (every render of it has the same). */
function sequenceOf(latest: Exclude<StackLatest, { kind: 'per-agent' }>): number {
  return latest.kind === 'plain' ? latest.row.sequence_id : (latest.rows.values().next().value?.sequence_id ?? Number.MAX_SAFE_INTEGER);
}

/** What a stack's read must reflect after one more notice (a new Need: see there). */
function nextNeed(before: Need | undefined, sequence: number, object: number | undefined): Need {
  return {
    notice: object === undefined ? sequence : (before?.notice ?? 0),
    object: Math.max(before?.object ?? 0, object ?? 0) || undefined,
  };
}

/** The agent's own event report (an `ack` notice): it changes only what events decide. */
function ownReportOnly(notice: AgentNotice): boolean {
  return notice.ack === true && notice.work_order_id === undefined && notice.stack_id === undefined;
}

/**
 * Events decide the incremental answer (a success drops the object) and, in full mode, only
 * whether a deleted stack's marker is still served (any event for it ends that). A full answer
 * without a marker stays: our agent reports after every apply, and would otherwise be read again
 * from the database on its next change.
 */
function dropWhatEventsDecide(agent: AgentEntries): void {
  delete agent.incremental;
  if (agent.full?.rows.some((row) => row.is_deletion_marker)) delete agent.full;
}

const modeKey = (full: boolean): 'full' | 'incremental' => (full ? 'full' : 'incremental');

/** The stack of a notice that says only "a new deployment object in this stack" (storeDeploymentObject's notice). */
function newObjectOnly(notice: AgentNotice): string | undefined {
  if (notice.work_order_id !== undefined || notice.ack !== undefined) return undefined;
  return notice.stack_id;
}

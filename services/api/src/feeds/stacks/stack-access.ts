import type { Queryable } from '@brokkr/db';
import { associatedStackIds } from './sql/agent-stacks.ts';

/** Re-read an agent's stacks at least this often, even without a wake-up (a lost hint is only late). */
const TTL_MS = 30_000;

/**
 * Which stacks an agent may stream cluster events for: the ones it is associated with (the same rule
 * as its target state), cached per agent. The cache entry is dropped on every notice for the
 * agent (sent after any change that can move the agent's stacks),
 * so a removed target stops the agent's writes as soon as the hint arrives. Brokkr checks nothing:
 * any agent can write into any stack.
 */
export class StackAccess {
  private readonly byAgent = new Map<string, { stacks: Promise<Set<string>>; at: number }>();

  constructor(private readonly db: Queryable) {}

  async allows(agentId: string, stackId: string): Promise<boolean> {
    const now = Date.now();
    let entry = this.byAgent.get(agentId);
    if (!entry || now - entry.at > TTL_MS) {
      entry = { stacks: associatedStackIds(this.db, agentId), at: now };
      this.byAgent.set(agentId, entry);
      entry.stacks.catch(() => this.byAgent.delete(agentId));
    }
    return (await entry.stacks).has(stackId);
  }

  /** The delivery's fourth stage (pipeline.ts): the agent's stacks may have changed. */
  noticed(agentId: string): void {
    this.byAgent.delete(agentId);
  }
}

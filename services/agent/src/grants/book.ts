import { DEFAULT_DRIFT_POLICY, type AgentGrants, type EffectiveDriftPolicy, type Grant, type MaintenanceSchedule } from '@brokkr/contracts';
import { grantsDigest, placementRefusal, placementScopeOf, resolveGrant, type Placement, type PlacementScope } from '@brokkr/grants';
import type { Logger } from '@brokkr/logger';

export interface GrantSource {
  grants(agentId: string): Promise<AgentGrants | undefined>;
}

export interface GrantBookDeps {
  broker: GrantSource;
  agentId: string;
  /** The agent's own namespace, which every scope refuses. */
  agentNamespace: string | undefined;
  logger: Logger;
  /** The schedule kept from before a restart (maintenance/schedule-store.ts), and where a new one goes. */
  keptSchedule?: MaintenanceSchedule | undefined;
  keepSchedule?: (schedule: MaintenanceSchedule) => void;
}

const NO_GENERATOR = '00000000-0000-0000-0000-000000000000';
const UNKNOWN_STACK_READ_MS = 5000;

/**
 * What each generator may place on this cluster, as the hub last said (GET /agents/{id}/grants),
 * kept in step with the target state: the hub sends the digest of the grants an answer was read
 * with (`Brokkr-Grants`), and the watcher brings the book up to that digest before it hands the
 * state on, so nothing is applied under grants older than the state that asks for it.
 *
 * A stack whose generator the book does not know gets no scope: the agent then places none of
 * its objects (fail closed). A hub without grants (Brokkr's) leaves the book `unconfined`: every
 * stack reaches the whole cluster but the agent's own namespace, as with Brokkr's agent.
 */
export class GrantBook {
  private grants: AgentGrants | undefined;
  /** The last maintenance schedule the hub served: kept when an answer carries none (docs/maintenance-windows.md). */
  private schedule: MaintenanceSchedule | undefined;
  /** Whether drift corrections of a stack are held back now (a maintenance window), set by the agent's window gate. */
  private correctionHeld: (stackId: string) => boolean = () => false;
  private digest: string | undefined;
  private unconfined = false;
  private inFlight: Promise<void> | undefined;
  private unknownReadAt = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly deps: GrantBookDeps) {
    this.schedule = deps.keptSchedule;
  }

  /**
   * Brings the book up to the digest of the target state just received: a fetch when it differs
   * from the grants held, or when nothing is known yet. A hub that sends none (Brokkr's) is read
   * once, to learn that it has no grants.
   */
  async sync(digest: string | undefined): Promise<void> {
    const known = this.grants !== undefined || this.unconfined;
    if (known && (digest === undefined || digest === this.digest)) return;
    await this.refresh();
  }

  /** Reads the grants again (also when a stack the book does not know comes up); one read at a time. */
  refresh(): Promise<void> {
    this.inFlight ??= this.fetch().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async fetch(): Promise<void> {
    const grants = await this.deps.broker.grants(this.deps.agentId);
    if (!grants) {
      if (!this.unconfined)
        this.deps.logger.warn('the hub serves no grants: every stack may reach the whole cluster but the agent namespace');
      this.unconfined = true;
      for (const listener of this.listeners) listener();
      return;
    }
    this.unconfined = false;
    this.grants = grants;
    if (grants.maintenance) this.takeSchedule(grants.maintenance);
    this.digest = grantsDigest(grants);
    for (const listener of this.listeners) listener();
  }

  /** Where the stack's objects may go; undefined when its generator has no grant the book knows. */
  scopeFor(stackId: string): PlacementScope | undefined {
    if (this.unconfined) return clusterScope(this.deps.agentNamespace);
    const generatorId = this.generatorOf(stackId);
    return generatorId && this.grants ? placementScopeOf(this.grants, generatorId, this.deps.agentNamespace) : undefined;
  }

  /**
   * Whether what the cluster says about an object (its events, a pod's log) may go to the stack
   * it names: the stack is one this agent is served, and its grant lets it place that object
   * there. A pod in another tenant's namespace (or in the agent's own) that carries the stack's
   * marker is not the stack's, and its log never reaches the stack's watchers.
   */
  judge(stackId: string, placement: Placement): 'admit' | 'refuse' | 'unknown' {
    const scope = this.scopeFor(stackId);
    if (!scope) {
      this.refreshSoon();
      return 'unknown';
    }
    return placementRefusal(scope, placement) === undefined ? 'admit' : 'refuse';
  }

  onRefresh(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** A stack the book does not know yet (newly targeted): read again, at most every few seconds. */
  private refreshSoon(): void {
    const now = Date.now();
    if (now - this.unknownReadAt < UNKNOWN_STACK_READ_MS) return;
    this.unknownReadAt = now;
    this.refresh().catch((err: unknown) => this.deps.logger.debug({ err }, 'reading the grants failed'));
  }

  /** The grant of the stack's generator, when known. */
  grantFor(stackId: string): Grant | undefined {
    return this.scopeFor(stackId)?.grant;
  }

  /**
   * The stack's drift policy for this agent (its cluster group's override folded in by the hub);
   * the default (correct, owned fields, nothing ignored) when the hub names none, or has no grants.
   */
  driftPolicyFor(stackId: string): EffectiveDriftPolicy {
    const id = stackId.toLowerCase();
    const policy = this.grants?.stacks.find((s) => s.stack_id === id)?.drift ?? DEFAULT_DRIFT_POLICY;
    // Outside its maintenance window a stack's drift is reported, never corrected.
    return policy.mode === 'correct' && this.correctionHeld(id) ? { ...policy, mode: 'report' } : policy;
  }

  private takeSchedule(schedule: MaintenanceSchedule): void {
    if (JSON.stringify(schedule) === JSON.stringify(this.schedule)) return;
    this.schedule = schedule;
    this.deps.keepSchedule?.(schedule);
  }

  /** The maintenance schedule last served (undefined: none yet, or a hub without windows). */
  maintenance(): MaintenanceSchedule | undefined {
    return this.schedule;
  }

  holdCorrections(held: (stackId: string) => boolean): void {
    this.correctionHeld = held;
  }

  generatorOf(stackId: string): string | undefined {
    const id = stackId.toLowerCase();
    return this.grants?.stacks.find((s) => s.stack_id === id)?.generator_id;
  }
}

/**
 * The whole cluster but the agent's own namespace, with the default grant otherwise (adoption off):
 * a work order's scope (an admin's), and every stack's on a hub that has no grants.
 */
export function clusterScope(agentNamespace: string | undefined): PlacementScope {
  return {
    generatorId: NO_GENERATOR,
    generatorName: 'any',
    grant: resolveGrant(null, NO_GENERATOR),
    wholeCluster: true,
    agentNamespace,
    others: [],
  };
}

import { mapLimit } from '../concurrency.ts';
import { EXIT, CliError } from '../errors.ts';
import type { Hub } from '../http.ts';
import type { Agent, AgentEvent, DeploymentObject, DeploymentObjectHealth, Stack } from '../types.ts';

/** Requests in flight at once while asking about many agents. */
const CONCURRENCY = 8;

export type AgentState = 'pending' | 'applied' | 'failed';

export interface AgentProgress {
  agent_id: string;
  name: string;
  cluster_name: string;
  state: AgentState;
  health: string | null;
  message: string | null;
}

export interface WaitResult {
  outcome: 'applied' | 'failed' | 'timeout';
  exitCode: number;
  agents: AgentProgress[];
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs: number;
  /** One progress line (the caller decides where it goes). */
  say: (line: string) => void;
  /**
   * The hub's time from which events count (e.g. when a new signature of unchanged content was
   * stored): an agent's earlier verdict on the same object, such as its refusal of the unsigned
   * content, says nothing about this apply.
   */
  since?: string;
}

/** "90s", "5m", "1h" or a number of seconds. */
export function parseDuration(raw: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!match) throw new CliError(`invalid duration "${raw}": use e.g. 90s, 5m or 1h`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * factor;
}

/**
 * The agents that receive the stack: every ACTIVE agent whose associated stacks (explicit target,
 * label or annotation match, as the hub computes them) include it. Inactive agents get no target
 * state from the hub, so waiting for them could only time out; they are reported and skipped.
 */
async function agentsForStack(hub: Hub, stack: Stack, say: (line: string) => void): Promise<Agent[]> {
  const agents = await hub.get<Agent[]>('/agents');
  const receives = await mapLimit(agents, CONCURRENCY, async (agent) =>
    (await hub.get<Stack[]>(`/agents/${agent.id}/stacks`)).some((s) => s.id === stack.id),
  );
  const targeting = agents.filter((_, i) => receives[i]);
  for (const agent of targeting.filter((a) => a.status !== 'ACTIVE'))
    say(`agent ${agent.name} (cluster ${agent.cluster_name}) targets this stack but is ${agent.status}: not waiting for it`);
  return targeting.filter((a) => a.status === 'ACTIVE');
}

/** The newest event this agent posted for the object (from `since`) decides: SUCCESS = applied, anything else = failed. */
function stateOf(events: AgentEvent[], objectId: string, since?: string): { state: AgentState; message: string | null } {
  const from = since ? Date.parse(since) : -Infinity;
  const latest = events.find((e) => e.deployment_object_id === objectId && Date.parse(e.created_at) >= from);
  if (!latest) return { state: 'pending', message: null };
  return { state: latest.status.toUpperCase() === 'SUCCESS' ? 'applied' : 'failed', message: latest.message };
}

async function poll(hub: Hub, agents: Agent[], object: DeploymentObject, since?: string): Promise<AgentProgress[]> {
  const health = await hub.get<DeploymentObjectHealth>(`/deployment-objects/${object.id}/health`);
  return mapLimit(agents, CONCURRENCY, async (agent) => {
    const events = await hub.get<AgentEvent[]>(`/agents/${agent.id}/events`);
    const { state, message } = stateOf(events, object.id, since);
    const record = health.health_records.find((h) => h.agent_id === agent.id);
    return { agent_id: agent.id, name: agent.name, cluster_name: agent.cluster_name, state, health: record?.status ?? null, message };
  });
}

const describe = (p: AgentProgress) =>
  `${p.name} (cluster ${p.cluster_name}): ${p.state}${p.health ? `, health ${p.health}` : ''}${p.message ? ` — ${p.message}` : ''}`;

/**
 * Polls until every agent that receives the stack reported this deployment object applied (exit
 * 0), one reported a failure (exit 1) or the timeout passed (exit 2). Prints a line per change.
 */
export async function waitForRollout(hub: Hub, stack: Stack, object: DeploymentObject, options: WaitOptions): Promise<WaitResult> {
  const started = Date.now();
  const agents = await agentsForStack(hub, stack, options.say);
  if (agents.length === 0)
    throw new CliError(`no active agent receives stack "${stack.name}": nothing would apply it (target one with --target or labels)`);
  options.say(`waiting for ${agents.length} agent(s) to apply deployment object ${object.id} (sequence ${object.sequence_id})…`);
  const seen = new Map<string, string>();
  for (;;) {
    const progress = await poll(hub, agents, object, options.since);
    const elapsed = `${Math.round((Date.now() - started) / 1000)}s`;
    for (const p of progress) {
      const line = describe(p);
      if (seen.get(p.agent_id) !== line) options.say(`[${elapsed}] ${line}`);
      seen.set(p.agent_id, line);
    }
    if (progress.some((p) => p.state === 'failed')) return { outcome: 'failed', exitCode: EXIT.failed, agents: progress };
    if (progress.every((p) => p.state === 'applied')) return { outcome: 'applied', exitCode: EXIT.ok, agents: progress };
    if (Date.now() - started >= options.timeoutMs) return { outcome: 'timeout', exitCode: EXIT.timeout, agents: progress };
    await new Promise((r) => setTimeout(r, options.intervalMs));
  }
}

import type { Command } from 'commander';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError, HubError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { age, render, renderTable } from '../output.ts';
import { findAgent, findStack, findStackOrUndefined } from '../resolve.ts';
import { UUID_RE, type Stack, type StackAgentStatus, type StackDependency } from '../types.ts';

const READY_WHEN = ['applied', 'healthy'] as const;
const SCOPES = ['agent', 'fleet'] as const;

function oneOf<T extends string>(what: string, allowed: readonly T[], value: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`${what} must be one of ${allowed.join(', ')}, not "${value}"`);
  return value as T;
}

/** Stack names by id, for the table (a dependency may name a stack the caller cannot list: its id then). */
async function stackNames(hub: Hub): Promise<Map<string, string>> {
  const stacks = await hub.get<Stack[]>('/stacks');
  return new Map(stacks.map((s) => [s.id, s.name]));
}

function renderDependencies(deps: readonly StackDependency[], names: Map<string, string>): string {
  if (!deps.length) return 'no dependencies: the stack waits for nothing\n';
  return renderTable(deps, [
    {
      header: 'WAITS FOR',
      value: (d) => (d.stack_id ? (names.get(d.stack_id) ?? d.stack_id) : `stacks labelled ${d.selector?.labels.join(',')} (id ${d.id})`),
    },
    { header: 'READY WHEN', value: (d) => d.ready_when },
    { header: 'SCOPE', value: (d) => (d.scope === 'agent' ? 'same agent' : 'every agent') },
    { header: 'BY', value: (d) => d.created_by },
    { header: 'AGE', value: (d) => age(d.created_at) },
  ]);
}

function windowLine(stack: string, agent: string, status: StackAgentStatus): string {
  const opens = status.opens_at ? ` until ${status.opens_at}` : '';
  return `stack "${stack}": agent "${agent}" takes nothing new now: maintenance window "${status.window?.name}" (${status.window?.type})${opens}`;
}

function rolloutLine(stack: string, agent: string, status: StackAgentStatus): string {
  const wave = status.wave === undefined ? '' : ` (its wave ${status.wave + 1})`;
  const why =
    status.reason === 'approval'
      ? `rollout ${status.rollout_id} waits for approvals of wave ${(status.approval_wave ?? 0) + 1}`
      : `rollout ${status.rollout_id} (${status.rollout_status}) has not released the agent's wave${wave}`;
  return `stack "${stack}": agent "${agent}" keeps the previous object: ${why}`;
}

const selectedBy = (selector: { labels: string[] } | undefined) => (selector ? ` (selected by labels ${selector.labels.join(',')})` : '');

/** A deleted stack whose deletion waits for the stacks depending on it to go from the agent first. */
function dependentsLines(stack: string, agent: string, status: StackAgentStatus, name: (id: string) => string): string {
  return [
    `stack "${stack}" is deleted; agent "${agent}" keeps it until the stacks depending on it are gone from the agent:`,
    ...(status.dependents ?? []).map((id) => `  stack ${name(id)} is still there`),
  ].join('\n');
}

/** "waiting on stack db (healthy on this agent)" — why the stack is or is not on the agent now. */
export function statusLine(stack: string, agent: string, status: StackAgentStatus, names: Map<string, string>): string {
  const name = (id: string) => `"${names.get(id) ?? id}"`;
  const where = (scope: string | undefined) => (scope === 'fleet' ? 'on every agent it targets' : 'on this agent');
  switch (status.state) {
    case 'served':
      return `stack "${stack}" is served to agent "${agent}"`;
    case 'not_targeted':
      return `stack "${stack}" does not target agent "${agent}"`;
    case 'no_object':
      return `stack "${stack}" has no deployment object yet`;
    case 'waiting':
      if (status.reason === 'dependents') return dependentsLines(stack, agent, status, name);
      if (status.reason === 'window') return windowLine(stack, agent, status);
      if (status.reason !== 'dependency') return rolloutLine(stack, agent, status);
      return [
        `stack "${stack}" waits on agent "${agent}" (the agent keeps what it applied of it and gets nothing new):`,
        ...status.waiting_on.map((d) => `  stack ${name(d.stack_id)} is not ${d.ready_when} ${where(d.scope)}${selectedBy(d.selector)}`),
      ].join('\n');
  }
}

/** `db` or `db:applied`: a stack `apply --depends-on` makes the applied stack wait for. */
export interface DependsOn {
  stack: Stack;
  readyWhen: (typeof READY_WHEN)[number];
}

/** Resolves each `<stack>[:applied|healthy]` (healthy by default) before anything is written. */
export async function resolveDependsOn(hub: Hub, refs: readonly string[]): Promise<DependsOn[]> {
  return Promise.all(
    refs.map(async (ref) => {
      const colon = ref.lastIndexOf(':');
      const [name, state] = colon > 0 ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, 'healthy'];
      return { stack: await findStack(hub, name), readyWhen: oneOf('--depends-on', READY_WHEN, state) };
    }),
  );
}

/** The stack waits for each (on the same agent); one it waits for already is left as it is. */
export async function ensureDependencies(hub: Hub, say: (line: string) => void, stack: Stack, deps: readonly DependsOn[]): Promise<void> {
  for (const dep of deps) {
    try {
      await hub.post(`/stacks/${stack.id}/dependencies`, { stack_id: dep.stack.id, ready_when: dep.readyWhen });
      say(`stack "${stack.name}": waits for stack "${dep.stack.name}" to be ${dep.readyWhen} on each agent`);
    } catch (err) {
      if (!(err instanceof HubError && err.code === 'dependency_exists')) throw err;
    }
  }
}

/** The stack by name or id; an id the hub no longer lists (a deleted stack) stands for itself. */
async function stackEvenDeleted(hub: Hub, ref: string): Promise<{ id: string; name: string }> {
  if (!UUID_RE.test(ref)) return findStack(hub, ref);
  return (await findStackOrUndefined(hub, ref).catch(() => undefined)) ?? { id: ref, name: ref };
}

export function registerDependencies(program: Command): void {
  const deps = program
    .command('dependencies')
    .alias('deps')
    .description('Stacks a stack waits for before its agents get anything new of it (docs/dependencies.md)');
  deps
    .command('list <stack>')
    .description('The stacks it waits for')
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const [list, names] = await Promise.all([hub.get<StackDependency[]>(`/stacks/${stack.id}/dependencies`), stackNames(hub)]);
      print(render(list, formatFor(cmd), () => renderDependencies(list, names)));
    });
  deps
    .command('add <stack>')
    .description('Make the stack wait for another, or for every stack carrying some labels (a cycle is refused, naming it)')
    .option('--on <stack>', 'the stack it waits for')
    .option('--selector <labels>', 'instead of --on: every stack (of yours) carrying all these stack labels, comma-separated')
    .option('--ready-when <state>', `${READY_WHEN.join(' | ')}`, 'healthy')
    .option('--scope <scope>', `${SCOPES.join(' | ')}: ready on the same agent, or on every agent the other stack targets`, 'agent')
    .action(async (ref: string, options: { on?: string; selector?: string; readyWhen: string; scope: string }, cmd: Command) => {
      const body = { ready_when: oneOf('--ready-when', READY_WHEN, options.readyWhen), scope: oneOf('--scope', SCOPES, options.scope) };
      if ((options.on === undefined) === (options.selector === undefined)) throw new CliError('give exactly one of --on and --selector');
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const say = sayFor(formatFor(cmd));
      if (options.selector !== undefined) {
        const labels = options.selector.split(',').filter((l) => l !== '');
        const added = await hub.post<StackDependency>(`/stacks/${stack.id}/dependencies`, { selector: { labels }, ...body });
        say(
          `stack "${stack.name}" now waits for every stack labelled ${labels.join(',')} to be ${body.ready_when} (${body.scope}; id ${added.id})`,
        );
        return;
      }
      const on = await findStack(hub, options.on!);
      await hub.post(`/stacks/${stack.id}/dependencies`, { stack_id: on.id, ...body });
      say(`stack "${stack.name}" now waits for stack "${on.name}" to be ${body.ready_when} (${body.scope})`);
    });
  deps
    .command('remove <stack> <on>')
    .description('The stack no longer waits for that one (<on>: a stack, or the id of a selector dependency)')
    .action(async (ref: string, onRef: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      // An id is passed as is: it names the stack depended on or a selector dependency.
      const on = UUID_RE.test(onRef) ? { id: onRef, name: onRef } : await findStack(hub, onRef);
      await hub.request('DELETE', `/stacks/${stack.id}/dependencies/${on.id}`);
      sayFor(formatFor(cmd))(`stack "${stack.name}" no longer waits for "${on.name}"`);
    });
  deps
    .command('status <stack> <agent>')
    .description('Whether the agent is served the stack now and, if not, what it waits for')
    .action(async (ref: string, agentRef: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      // A deleted stack is asked about by id (its deletion may wait for the stacks depending on it).
      const [stack, agent] = await Promise.all([stackEvenDeleted(hub, ref), findAgent(hub, agentRef)]);
      const [status, names] = await Promise.all([
        hub.get<StackAgentStatus>(`/stacks/${stack.id}/agents/${agent.id}/status`),
        stackNames(hub),
      ]);
      print(render(status, formatFor(cmd), () => `${statusLine(stack.name, agent.name, status, names)}\n`));
    });
}

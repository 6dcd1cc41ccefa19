import { CliError, HubError } from './errors.ts';
import { isNotFound, type Hub } from './http.ts';
import { UUID_RE, type Agent, type Generator, type Stack } from './types.ts';

/**
 * Names → records. Every command takes a name or an id; the hub only looks things up by id, so
 * names are matched client-side against the list the caller's PAK may read.
 */
function byName<T extends { id: string; name: string }>(kind: string, items: T[], name: string, describe: (t: T) => string): T {
  const matches = items.filter((i) => i.name === name);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new CliError(`${kind} "${name}" not found`);
  throw new CliError(`${matches.length} ${kind}s are named "${name}" (${matches.map(describe).join(', ')}): use the id`);
}

async function byId<T>(kind: string, load: () => Promise<T>, id: string): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (isNotFound(err)) throw new CliError(`${kind} ${id} not found`);
    throw err;
  }
}

/** By id or name. A generator may not GET /agents/{id}, but lists the agents registered with it: those are searched. */
export async function findAgent(hub: Hub, ref: string): Promise<Agent> {
  if (!UUID_RE.test(ref)) return byName('agent', await hub.get<Agent[]>('/agents'), ref, (a) => `${a.id} in cluster ${a.cluster_name}`);
  try {
    return await byId('agent', () => hub.get<Agent>(`/agents/${ref}`), ref);
  } catch (err) {
    if (!(err instanceof HubError && err.status === 403)) throw err;
    const found = (await hub.get<Agent[]>('/agents')).find((a) => a.id === ref);
    if (!found) throw new CliError(`agent ${ref} not found (or not registered with this generator)`);
    return found;
  }
}

/** The stack, or undefined when no stack has that name (an unknown id is an error). */
export async function findStackOrUndefined(hub: Hub, ref: string): Promise<Stack | undefined> {
  if (UUID_RE.test(ref)) return byId('stack', () => hub.get<Stack>(`/stacks/${ref}`), ref);
  const matches = (await hub.get<Stack[]>('/stacks')).filter((s) => s.name === ref);
  return matches[0];
}

export async function findStack(hub: Hub, ref: string): Promise<Stack> {
  const stack = await findStackOrUndefined(hub, ref);
  if (!stack) throw new CliError(`stack "${ref}" not found`);
  return stack;
}

export async function findGenerator(hub: Hub, ref: string): Promise<Generator> {
  if (UUID_RE.test(ref)) return byId('generator', () => hub.get<Generator>(`/generators/${ref}`), ref);
  return byName('generator', await hub.get<Generator[]>('/generators'), ref, (g) => g.id);
}

import { CliError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { age, short, type Column } from '../output.ts';
import { findAgent, findStack } from '../resolve.ts';
import {
  UUID_RE,
  type Agent,
  type DeploymentObject,
  type FleetRollout,
  type Preview,
  type PreviewSummary,
  type Rollout,
  type Stack,
  type StackTemplate,
  type WorkOrder,
} from '../types.ts';

/** Filters `get` understands; each resource uses the ones that apply to it. */
export interface GetFilters {
  /** deployment objects, previews, rollouts: the stack. */
  stack?: string;
  /** work orders, rollouts (comma-separated for rollouts). */
  status?: string;
  workType?: string;
}

/** What `get` needs to know about a kind of thing: how to list it, find one, and show it as a table. */
export interface ResourceKind<T> {
  names: string[];
  list(hub: Hub, filters: GetFilters): Promise<T[]>;
  one(hub: Hub, ref: string): Promise<T>;
  columns: Column<T>[];
}

const agents: ResourceKind<Agent> = {
  names: ['agents', 'agent'],
  list: (hub) => hub.get<Agent[]>('/agents'),
  one: findAgent,
  columns: [
    { header: 'NAME', value: (a) => a.name },
    { header: 'CLUSTER', value: (a) => a.cluster_name },
    { header: 'STATUS', value: (a) => a.status },
    { header: 'HEARTBEAT', value: (a) => age(a.last_heartbeat) },
    { header: 'K8S', value: (a) => (a.k8s_reachable === null ? null : a.k8s_reachable ? 'reachable' : 'unreachable') },
    { header: 'ID', value: (a) => a.id },
  ],
};

const stacks: ResourceKind<Stack> = {
  names: ['stacks', 'stack'],
  list: (hub) => hub.get<Stack[]>('/stacks'),
  one: findStack,
  columns: [
    { header: 'NAME', value: (s) => s.name },
    { header: 'GENERATOR', value: (s) => short(s.generator_id) },
    { header: 'AGE', value: (s) => age(s.created_at) },
    { header: 'DESCRIPTION', value: (s) => s.description },
    { header: 'ID', value: (s) => s.id },
  ],
};

export const deploymentObjects: ResourceKind<DeploymentObject> = {
  names: ['deployment-objects', 'deployment-object', 'do'],
  async list(hub, filters) {
    if (!filters.stack) throw new CliError('deployment objects are listed per stack: add --stack <name|id>');
    const stack = await findStack(hub, filters.stack);
    return hub.get<DeploymentObject[]>(`/stacks/${stack.id}/deployment-objects`);
  },
  one(hub, ref) {
    if (!UUID_RE.test(ref)) throw new CliError(`"${ref}" is not a deployment object id (a UUID)`);
    return hub.get<DeploymentObject>(`/deployment-objects/${ref}`);
  },
  columns: [
    { header: 'SEQUENCE', value: (d) => d.sequence_id },
    { header: 'CHECKSUM', value: (d) => d.yaml_checksum.slice(0, 12) },
    { header: 'MARKER', value: (d) => (d.is_deletion_marker ? 'deletion' : '') },
    { header: 'AGE', value: (d) => age(d.created_at) },
    { header: 'ID', value: (d) => d.id },
  ],
};

const workOrders: ResourceKind<WorkOrder> = {
  names: ['work-orders', 'work-order', 'wo'],
  list: (hub, filters) => hub.get<WorkOrder[]>('/work-orders', { status: filters.status, work_type: filters.workType }),
  one(hub, ref) {
    if (!UUID_RE.test(ref)) throw new CliError(`"${ref}" is not a work order id (a UUID)`);
    return hub.get<WorkOrder>(`/work-orders/${ref}`);
  },
  columns: [
    { header: 'TYPE', value: (w) => w.work_type },
    { header: 'STATUS', value: (w) => w.status },
    { header: 'CLAIMED BY', value: (w) => short(w.claimed_by) },
    { header: 'RETRIES', value: (w) => `${w.retry_count}/${w.max_retries}` },
    { header: 'AGE', value: (w) => age(w.created_at) },
    { header: 'ID', value: (w) => w.id },
  ],
};

const wavesProgress = (r: Rollout | FleetRollout) =>
  r.waves.map((w) => `${w.name} ${w.applied}/${w.agents}${w.failed ? ` (${w.failed} failed)` : ''}`).join(', ');

/** Fleet-wide (GET /rollouts: every stack for an admin, its own for a generator), or one stack's with --stack. */
const rollouts: ResourceKind<Rollout | FleetRollout> = {
  names: ['rollouts', 'rollout', 'ro'],
  async list(hub, filters) {
    if (!filters.stack) return hub.get<FleetRollout[]>('/rollouts', { status: filters.status });
    const stack = await findStack(hub, filters.stack);
    const list = await hub.get<Rollout[]>(`/stacks/${stack.id}/rollouts`);
    const wanted = filters.status?.split(',');
    return list.filter((r) => !wanted || wanted.includes(r.status)).map((r) => ({ ...r, stack_name: stack.name }));
  },
  one(hub, ref) {
    if (!UUID_RE.test(ref)) throw new CliError(`"${ref}" is not a rollout id (a UUID); for a stack's, use "brokkr rollout status <stack>"`);
    return hub.get<Rollout>(`/rollouts/${ref}`);
  },
  columns: [
    { header: 'STACK', value: (r) => ('stack_name' in r ? r.stack_name : short(r.stack_id)) },
    { header: 'STATUS', value: (r) => r.status },
    { header: 'WAVE', value: (r) => (r.released_wave < 0 ? `0/${r.waves.length}` : `${r.released_wave + 1}/${r.waves.length}`) },
    { header: 'PROGRESS', value: wavesProgress },
    { header: 'AGE', value: (r) => age(r.created_at) },
    { header: 'ID', value: (r) => r.id },
  ],
};

/** A stack's previews (newest 50, counts only) with --stack, or one preview whole by id. */
const previews: ResourceKind<PreviewSummary | Preview> = {
  names: ['previews', 'preview', 'pv'],
  async list(hub, filters) {
    if (!filters.stack) throw new CliError('previews are listed per stack: add --stack <name|id>');
    const stack = await findStack(hub, filters.stack);
    return hub.get<PreviewSummary[]>(`/stacks/${stack.id}/previews`);
  },
  one(hub, ref) {
    if (!UUID_RE.test(ref)) throw new CliError(`"${ref}" is not a preview id (a UUID)`);
    return hub.get<Preview>(`/previews/${ref}`);
  },
  columns: [
    { header: 'STATUS', value: (p) => p.status },
    { header: 'AGENTS', value: (p) => p.counts.agents },
    { header: 'CLEAN', value: (p) => p.counts.clean },
    { header: 'CHANGES', value: (p) => p.counts.changes },
    { header: 'ERRORS', value: (p) => p.counts.error },
    { header: 'BY', value: (p) => p.created_by },
    { header: 'AGE', value: (p) => age(p.created_at) },
    { header: 'ID', value: (p) => p.id },
  ],
};

/** Every live template version the PAK may read (system templates and a generator's own). */
const templates: ResourceKind<StackTemplate> = {
  names: ['templates', 'template', 'tpl'],
  list: (hub) => hub.get<StackTemplate[]>('/templates'),
  one(hub, ref) {
    if (!UUID_RE.test(ref)) throw new CliError(`"${ref}" is not a template id (a UUID)`);
    return hub.get<StackTemplate>(`/templates/${ref}`);
  },
  columns: [
    { header: 'NAME', value: (t) => t.name },
    { header: 'VERSION', value: (t) => t.version },
    { header: 'OWNER', value: (t) => (t.generator_id ? short(t.generator_id) : 'system') },
    { header: 'AGE', value: (t) => age(t.created_at) },
    { header: 'DESCRIPTION', value: (t) => t.description },
    { header: 'ID', value: (t) => t.id },
  ],
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous registry
export const RESOURCE_KINDS: ResourceKind<any>[] = [agents, stacks, deploymentObjects, workOrders, rollouts, previews, templates];

export const KIND_HELP = 'agents | stacks | deployment-objects (do) | work-orders (wo) | rollouts (ro) | previews (pv) | templates (tpl)';

export function kindNamed(name: string): ResourceKind<unknown> {
  const kind = RESOURCE_KINDS.find((k) => k.names.includes(name.toLowerCase()));
  if (!kind) throw new CliError(`unknown resource "${name}": use ${KIND_HELP}`);
  return kind;
}

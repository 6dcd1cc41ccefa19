import { CliError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { age, short, type Column } from '../output.ts';
import { findAgent, findStack } from '../resolve.ts';
import { UUID_RE, type Agent, type DeploymentObject, type Stack, type WorkOrder } from '../types.ts';

/** Filters `get` understands; each resource uses the ones that apply to it. */
export interface GetFilters {
  stack?: string;
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous registry
export const RESOURCE_KINDS: ResourceKind<any>[] = [agents, stacks, deploymentObjects, workOrders];

export const KIND_HELP = 'agents | stacks | deployment-objects (do) | work-orders (wo)';

export function kindNamed(name: string): ResourceKind<unknown> {
  const kind = RESOURCE_KINDS.find((k) => k.names.includes(name.toLowerCase()));
  if (!kind) throw new CliError(`unknown resource "${name}": use ${KIND_HELP}`);
  return kind;
}

import type { Command } from 'commander';
import { formatFor, hubFor, print } from '../context.ts';
import { CliError, HubError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { age, render, renderFields, renderTable, short, truncate } from '../output.ts';
import { findAgent, findStack } from '../resolve.ts';
import type { AgentEvent, AgentLabel, DeploymentObject, DeploymentObjectHealth, Stack, StackLabel, WorkOrder } from '../types.ts';
import { deploymentObjects, KIND_HELP, kindNamed } from './resources.ts';

const RECENT = 10;

/** A composite document (the JSON/YAML output) and its human rendering. */
interface Description {
  data: unknown;
  text: string;
}

const section = (title: string, body: string) => `\n${title}:\n${body.replace(/^/gm, '  ').trimEnd()}\n`;

const eventsTable = (events: AgentEvent[]) =>
  events.length === 0
    ? '(none)'
    : renderTable(events.slice(0, RECENT), [
        { header: 'AGE', value: (e) => age(e.created_at) },
        { header: 'OBJECT', value: (e) => short(e.deployment_object_id) },
        { header: 'TYPE', value: (e) => e.event_type },
        { header: 'STATUS', value: (e) => e.status },
        { header: 'MESSAGE', value: (e) => truncate(e.message) },
      ]);

async function describeAgent(hub: Hub, ref: string): Promise<Description> {
  const agent = await findAgent(hub, ref);
  const [labels, stacks, events] = await Promise.all([
    hub.get<AgentLabel[]>(`/agents/${agent.id}/labels`),
    hub.get<Stack[]>(`/agents/${agent.id}/stacks`),
    hub.get<AgentEvent[]>(`/agents/${agent.id}/events`),
  ]);
  const text =
    renderFields([
      ['Name', agent.name],
      ['Cluster', agent.cluster_name],
      ['ID', agent.id],
      ['Status', agent.status],
      ['Last heartbeat', agent.last_heartbeat ? `${agent.last_heartbeat} (${age(agent.last_heartbeat)} ago)` : null],
      ['Kubernetes', agent.k8s_reachable === null ? null : agent.k8s_reachable ? 'reachable' : 'unreachable'],
      ['Labels', labels.map((l) => l.label).join(', ')],
    ]) +
    section('Stacks', stacks.length ? stacks.map((s) => `${s.name} (${s.id})`).join('\n') : '(none)') +
    section(`Recent events (newest first, up to ${RECENT})`, eventsTable(events));
  return { data: { agent, labels: labels.map((l) => l.label), stacks, events: events.slice(0, RECENT) }, text };
}

async function describeStack(hub: Hub, ref: string): Promise<Description> {
  const stack = await findStack(hub, ref);
  const [labels, objects] = await Promise.all([
    hub.get<StackLabel[]>(`/stacks/${stack.id}/labels`),
    hub.get<DeploymentObject[]>(`/stacks/${stack.id}/deployment-objects`),
  ]);
  const listed = objects.slice(0, RECENT).map(({ yaml_content: _y, ...rest }) => rest);
  const text =
    renderFields([
      ['Name', stack.name],
      ['ID', stack.id],
      ['Generator', stack.generator_id],
      ['Description', stack.description],
      ['Created', stack.created_at],
      ['Labels', labels.map((l) => l.label).join(', ')],
    ]) +
    section(
      `Deployment objects (newest first, up to ${RECENT})`,
      listed.length ? renderTable(objects.slice(0, RECENT), deploymentObjects.columns) : '(none)',
    );
  return { data: { stack, labels: labels.map((l) => l.label), deployment_objects: listed }, text };
}

async function describeDeploymentObject(hub: Hub, ref: string): Promise<Description> {
  const object = await deploymentObjects.one(hub, ref);
  // Health is admin-only on the hub: other callers see the object without it.
  const health = await hub.get<DeploymentObjectHealth>(`/deployment-objects/${object.id}/health`).catch((err: unknown) => {
    if (err instanceof HubError && err.status === 403) return undefined;
    throw err;
  });
  const text =
    renderFields([
      ['ID', object.id],
      ['Stack', object.stack_id],
      ['Sequence', object.sequence_id],
      ['Checksum', object.yaml_checksum],
      ['Deletion marker', object.is_deletion_marker],
      ['Submitted', object.submitted_at],
      ['Health', health?.overall_status ?? '(admin only)'],
    ]) +
    (health?.health_records.length
      ? section(
          'Health per agent',
          renderTable(health.health_records, [
            { header: 'AGENT', value: (h) => h.agent_id },
            { header: 'STATUS', value: (h) => h.status },
            { header: 'CHECKED', value: (h) => age(h.checked_at) },
          ]),
        )
      : '') +
    section('YAML', object.yaml_content);
  return { data: { deployment_object: object, ...(health ? { health } : {}) }, text };
}

async function describeWorkOrder(hub: Hub, ref: string): Promise<Description> {
  const order = (await kindNamed('work-orders').one(hub, ref)) as WorkOrder & { yaml_content: string };
  const text =
    renderFields([
      ['ID', order.id],
      ['Type', order.work_type],
      ['Status', order.status],
      ['Claimed by', order.claimed_by],
      ['Retries', `${order.retry_count}/${order.max_retries}`],
      ['Last error', order.last_error],
      ['Created', order.created_at],
    ]) + section('YAML', order.yaml_content);
  return { data: order, text };
}

const DESCRIBERS: [string[], (hub: Hub, ref: string) => Promise<Description>][] = [
  [['agent', 'agents'], describeAgent],
  [['stack', 'stacks'], describeStack],
  [['deployment-object', 'deployment-objects', 'do'], describeDeploymentObject],
  [['work-order', 'work-orders', 'wo'], describeWorkOrder],
];

export function registerDescribe(program: Command): void {
  program
    .command('describe')
    .description(`Show one item in detail: ${KIND_HELP}`)
    .argument('<resource>', KIND_HELP)
    .argument('<name-or-id>', 'agents and stacks by name or id; deployment objects and work orders by id')
    .action(async (resource: string, ref: string, _options: unknown, cmd: Command) => {
      const describer = DESCRIBERS.find(([names]) => names.includes(resource.toLowerCase()))?.[1];
      if (!describer) throw new CliError(`unknown resource "${resource}": use ${KIND_HELP}`);
      const format = formatFor(cmd);
      const { data, text } = await describer(hubFor(cmd), ref);
      print(render(data, format, () => text));
    });
}

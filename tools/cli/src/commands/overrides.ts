import fs from 'node:fs';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError, HubError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { render, renderTable, truncate } from '../output.ts';
import { findAgent, findStack } from '../resolve.ts';
import type { Explanation, NewOverride, Override, Stack } from '../types.ts';
import { signedLayers, type SignedLayer } from '@brokkr/overrides';

const selectorText = (s: Override['selector']): string => {
  const parts = [
    ...(s.agent_ids?.length ? [`agents=${s.agent_ids.length}`] : []),
    ...(s.labels ?? []).map((l) => `label:${l}`),
    ...Object.entries(s.annotations ?? {}).map(([k, v]) => `${k}=${v}`),
  ];
  return parts.join(' ') || '(every agent)';
};

function renderLayers(layers: readonly Override[]): string {
  if (!layers.length) return 'no override layers\n';
  return renderTable(layers, [
    { header: 'NAME', value: (l) => l.name },
    { header: 'PRIORITY', value: (l) => String(l.priority) },
    { header: 'SELECTOR', value: (l) => selectorText(l.selector) },
    { header: 'VALUES', value: (l) => truncate(l.values ? JSON.stringify(l.values) : null, 40) },
    { header: 'PATCHES', value: (l) => String(l.patches?.length ?? 0) },
  ]);
}

function renderExplanation(e: Explanation): string {
  const lines = [
    `object ${e.deployment_object_id}${e.per_agent ? ' (rendered for each agent)' : ' (the same for every agent)'}`,
    `layers: ${e.inputs.layers.map((l) => `${l.name} (${l.priority})`).join(', ') || 'none'}`,
    ...(e.inputs.capabilities ? [`capabilities: Kubernetes ${e.inputs.capabilities.kubeVersion}`] : []),
    ...(e.error ? [`render failed: ${e.error}`] : []),
    ...(e.inputs.error ? [`cannot be rendered now: ${e.inputs.error}`] : []),
  ];
  const fields = e.fields.length
    ? renderTable(e.fields, [
        { header: 'WHERE', value: (f) => (f.in === 'values' ? 'values' : (f.target ?? 'object')) },
        { header: 'PATH', value: (f) => f.path },
        { header: 'LAYER', value: (f) => f.layer },
        { header: 'BY', value: (f) => f.by ?? 'values' },
      ])
    : 'no field set by a layer\n';
  return `${lines.join('\n')}\n\n${fields}${e.yaml_content ? `\n${e.yaml_content}` : ''}`;
}

/** The layers of a YAML file: one mapping per document ({name, priority, selector, values, patches}). */
export function readLayers(file: string): NewOverride[] {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
  const layers = docs.map((d) => {
    if (d.errors[0]) throw new CliError(`${file}: invalid YAML: ${d.errors[0].message.split('\n')[0]}`);
    return d.toJS() as NewOverride | null;
  });
  const named = layers.filter((l): l is NewOverride => l !== null);
  if (!named.length || named.some((l) => typeof l !== 'object' || typeof l.name !== 'string'))
    throw new CliError(`${file}: each YAML document must be a layer with a name`);
  return named;
}

/** Creates the layer, or replaces the one of the same name. */
async function putLayer(hub: Hub, stack: Stack, layer: NewOverride): Promise<'created' | 'replaced'> {
  try {
    await hub.post(`/stacks/${stack.id}/overrides`, layer);
    return 'created';
  } catch (err) {
    if (!(err instanceof HubError && err.code === 'override_exists')) throw err;
  }
  await hub.put(`/stacks/${stack.id}/overrides/${encodeURIComponent(layer.name)}`, layer);
  return 'replaced';
}

/**
 * The stack's layers become exactly these (created or replaced by name, any other deleted), for
 * `apply --layers`: with --sign the whole set is signed, so a layer left over would make every
 * signing agent refuse. Resolves with the set as signed (@brokkr/overrides signedLayers).
 */
export async function replaceLayers(
  hub: Hub,
  stack: Stack,
  layers: readonly NewOverride[],
  say: (line: string) => void,
): Promise<SignedLayer[]> {
  const named = layers.map((l) => ({ ...l, priority: l.priority ?? 0, selector: l.selector ?? {} }));
  for (const layer of named) say(`stack "${stack.name}": layer "${layer.name}" ${await putLayer(hub, stack, layer)}`);
  const kept = new Set(named.map((l) => l.name));
  for (const old of await hub.get<Override[]>(`/stacks/${stack.id}/overrides`)) {
    if (kept.has(old.name)) continue;
    await hub.request('DELETE', `/stacks/${stack.id}/overrides/${encodeURIComponent(old.name)}`);
    say(`stack "${stack.name}": layer "${old.name}" deleted (not in the file)`);
  }
  return signedLayers(named);
}

/**
 * A stack signed by its render inputs without --layers: its layers are signed as none, so a stack
 * that has some is refused here rather than by every signing agent. The hub's layers are never
 * signed as it reports them: the hub is the party the signature guards against.
 */
export async function refuseUnsignedLayers(hub: Hub, stack: Stack): Promise<void> {
  const layers = await hub.get<Override[]>(`/stacks/${stack.id}/overrides`);
  if (layers.length)
    throw new CliError(
      `stack "${stack.name}" has ${layers.length} override layer(s) (${layers.map((l) => l.name).join(', ')}): ` +
        'pass them with --layers <file> so they are signed with it, or delete them',
    );
}

export function registerOverrides(program: Command): void {
  const overrides = program.command('overrides').description("A stack's override layers: per-cluster values and patches (docs/renders.md)");
  overrides
    .command('list <stack>')
    .description('The layers, in the order they apply')
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const layers = await hub.get<Override[]>(`/stacks/${stack.id}/overrides`);
      print(render(layers, formatFor(cmd), () => renderLayers(layers)));
    });
  overrides
    .command('apply <stack>')
    .description('Create or replace layers from a YAML file (one layer per document); each is rendered for every agent first')
    .requiredOption('-f, --file <file>', 'the layers')
    .action(async (ref: string, options: { file: string }, cmd: Command) => {
      const layers = readLayers(options.file);
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const say = sayFor(formatFor(cmd));
      for (const layer of layers) say(`stack "${stack.name}": layer "${layer.name}" ${await putLayer(hub, stack, layer)}`);
    });
  overrides
    .command('delete <stack> <name>')
    .description('Remove a layer (the agents it applied to are rendered again without it)')
    .action(async (ref: string, name: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      await hub.request('DELETE', `/stacks/${stack.id}/overrides/${encodeURIComponent(name)}`);
      sayFor(formatFor(cmd))(`stack "${stack.name}": layer "${name}" deleted`);
    });
  overrides
    .command('explain <stack> <agent>')
    .description("An agent's render of the stack: what it is served, the layers that applied, which layer set each field")
    .action(async (ref: string, agentRef: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const [stack, agent] = await Promise.all([findStack(hub, ref), findAgent(hub, agentRef)]);
      const explained = await hub.get<Explanation>(`/stacks/${stack.id}/agents/${agent.id}/render`);
      print(render(explained, formatFor(cmd), () => renderExplanation(explained)));
    });
}

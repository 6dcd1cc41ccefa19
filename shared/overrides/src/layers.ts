/** Which agents a layer applies to: every criterion given must hold (none given: every agent). */
export interface LayerSelector {
  agent_ids?: string[];
  /** Every one of these plain tags. */
  labels?: string[];
  /** Every one of these key/value pairs. */
  annotations?: Record<string, string>;
}

/** A patch of the rendered objects: the documents its target names, changed by a merge patch (RFC 7386) or a JSON patch (RFC 6902). */
export interface LayerPatch {
  target: { kind: string; name: string; namespace?: string; apiVersion?: string };
  merge_patch?: Record<string, unknown>;
  json_patch?: { op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test'; path: string; value?: unknown; from?: string }[];
}

/** One override layer of a stack, as stored. */
export interface OverrideLayer {
  id: string;
  name: string;
  priority: number;
  selector: LayerSelector;
  layer_values: Record<string, unknown> | null;
  patches: LayerPatch[] | null;
}

/** What selecting and ordering a layer needs: the stored layer and the signed one alike. */
export interface SelectableLayer {
  name: string;
  priority: number;
  selector: LayerSelector;
}

/**
 * What a selector is evaluated against. The hub uses the agent as it stores it; an agent that
 * requires signatures uses its own id and the labels and annotations its trust policy gives it,
 * never the hub's view of them.
 */
export interface LayerTarget {
  id: string;
  labels: readonly string[];
  annotations: Readonly<Record<string, string>>;
}

export function selects(selector: LayerSelector, agent: LayerTarget): boolean {
  if (selector.agent_ids && !selector.agent_ids.map((id) => id.toLowerCase()).includes(agent.id)) return false;
  if (selector.labels && !selector.labels.every((label) => agent.labels.includes(label))) return false;
  const wanted = Object.entries(selector.annotations ?? {});
  return wanted.every(([key, value]) => agent.annotations[key] === value);
}

/** The layers that apply to the agent, in the order they apply: lowest priority first, then by name (the last one wins). */
export function layersFor<L extends SelectableLayer>(layers: readonly L[], agent: LayerTarget): L[] {
  return layers
    .filter((layer) => selects(layer.selector, agent))
    .toSorted((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Helm's merge of values: maps merge key by key, anything else (lists included) is replaced, and a
 * `null` removes the key.
 */
export function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(out[key])) out[key] = mergeValues(out[key], value);
    else out[key] = value;
  }
  return out;
}

/** A chart's values with the values of each layer that applies merged over them, in the order the layers apply. */
export const valuesAfter = (
  base: Record<string, unknown>,
  layerValues: readonly (Record<string, unknown> | null | undefined)[],
): Record<string, unknown> => layerValues.reduce<Record<string, unknown>>((values, over) => mergeValues(values, over ?? {}), base);

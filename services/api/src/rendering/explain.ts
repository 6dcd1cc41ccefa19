import type { LayerPatch, OverrideLayer } from '@brokkr/overrides';

/** Who set one field of an agent's render: a layer's values (a chart's value) or a layer's patch (a rendered object's field). */
export interface FieldOrigin {
  /** `values`: a path in the chart's values; `object`: a path in the rendered document `target`. */
  in: 'values' | 'object';
  /** A JSON pointer. */
  path: string;
  layer: string;
  target?: string;
  /** How a patch set it: `merge_patch`, or the RFC 6902 operation. */
  by?: string;
}

const pointer = (segments: readonly string[]) => segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The leaves of a merge (values or a merge patch): a map is merged into, anything else (a list, a scalar, null) is set whole. */
function leaves(value: Record<string, unknown>, at: string[] = []): string[][] {
  return Object.entries(value).flatMap(([key, v]) =>
    isPlainObject(v) && Object.keys(v).length > 0 ? leaves(v, [...at, key]) : [[...at, key]],
  );
}

const describeTarget = (t: LayerPatch['target']) => `${t.kind} '${t.namespace ? `${t.namespace}/` : ''}${t.name}'`;

function patchOrigins(layer: OverrideLayer, patch: LayerPatch): FieldOrigin[] {
  const target = describeTarget(patch.target);
  const merged = patch.merge_patch
    ? leaves(patch.merge_patch).map((p) => ({ in: 'object' as const, path: pointer(p), layer: layer.name, target, by: 'merge_patch' }))
    : [];
  const ops = (patch.json_patch ?? []).map((op) => ({ in: 'object' as const, path: op.path, layer: layer.name, target, by: op.op }));
  return [...merged, ...ops];
}

/**
 * Which layer set each field, in the order the layers apply (the last origin of a path is the one
 * in effect): a value a layer merges into a chart's values, a field a layer's patch sets.
 */
export function fieldOrigins(applied: readonly OverrideLayer[]): FieldOrigin[] {
  const origins: FieldOrigin[] = [];
  for (const layer of applied) {
    for (const path of leaves(layer.layer_values ?? {})) origins.push({ in: 'values', path: pointer(path), layer: layer.name });
    for (const patch of layer.patches ?? []) origins.push(...patchOrigins(layer, patch));
  }
  return origins;
}

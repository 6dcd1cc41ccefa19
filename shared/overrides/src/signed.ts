import type { LayerPatch, LayerSelector, OverrideLayer } from './layers.ts';

/**
 * A layer as a generator signs it (docs/signatures.md, "Override layers"): the fields it writes
 * (the wire's names), not the id the hub gave it. The signed set is every layer of the stack,
 * not only those that select some agent: each agent selects from it by its own identity.
 */
export interface SignedLayer {
  name: string;
  priority: number;
  selector: LayerSelector;
  values: Record<string, unknown> | null;
  patches: LayerPatch[] | null;
}

/** A layer as written (a file the CLI reads, after the wire schema's defaults) or as the hub stores it. */
export type LayerLike =
  | Pick<OverrideLayer, 'name' | 'priority' | 'selector' | 'layer_values' | 'patches'>
  | { name: string; priority: number; selector: LayerSelector; values?: Record<string, unknown> | null; patches?: LayerPatch[] | null };

const signedLayer = (layer: LayerLike): SignedLayer => ({
  name: layer.name,
  priority: layer.priority,
  selector: layer.selector,
  values: ('layer_values' in layer ? layer.layer_values : layer.values) ?? null,
  patches: layer.patches ?? null,
});

/** A stack's layers in their signed form and one order (priority, then name), so the generator and the agent hash the same set. */
export function signedLayers(layers: readonly LayerLike[]): SignedLayer[] {
  return layers.map(signedLayer).toSorted((a, b) => a.priority - b.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

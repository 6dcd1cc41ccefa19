import type { RenderInputs } from '@brokkr/contracts';
import { applyPatches, layersFor, PatchFailed, valuesAfter, type LayerTarget, type SignedLayer } from '@brokkr/overrides';
import type { RenderResult } from '@brokkr/render';

/**
 * Override layers signed with a render's inputs (docs/signatures.md, "Override layers"): the agent
 * selects from the stack's whole signed set by its own id and the labels and annotations of its
 * trust policy, never by what the hub stores about it, and applies them as the hub does
 * (@brokkr/overrides): values merged before a chart renders, patches on the render after.
 */
export const ownLayers = (inputs: RenderInputs, me: LayerTarget): SignedLayer[] => layersFor(inputs.layers ?? [], me);

/** A chart's values with the layers' values merged over them. */
export const layeredValues = (values: Record<string, unknown>, layers: readonly SignedLayer[]): Record<string, unknown> =>
  valuesAfter(
    values,
    layers.map((l) => l.values),
  );

/** The render with the layers' patches applied in order; a patch that fails fails the render, as on the hub. */
export function patchedRender(result: RenderResult, layers: readonly SignedLayer[]): RenderResult {
  const patches = layers.flatMap((l) => l.patches ?? []);
  if (!result.ok || patches.length === 0) return result;
  try {
    return { ok: true, yaml: applyPatches(result.yaml, patches) };
  } catch (err) {
    if (err instanceof PatchFailed) return { ok: false, reason: 'invalid', error: err.message };
    throw err;
  }
}

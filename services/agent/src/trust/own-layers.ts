import type { RenderInputs } from '@brokkr/contracts';
import {
  applyPatches,
  layersFor,
  PatchFailed,
  resolveAgentReferences,
  UnresolvedReference,
  valuesAfter,
  type AgentView,
  type SignedLayer,
} from '@brokkr/overrides';
import type { RenderResult } from '@brokkr/render';

/**
 * Override layers and agent references in signed inputs (docs/signatures.md, "Override layers"):
 * the agent selects from the stack's whole signed layer set, and resolves `{{ agent.* }}`, by its
 * own id, name and cluster and the labels and annotations of its trust policy, never by what the
 * hub stores about it, and applies them as the hub does (@brokkr/overrides): values merged before a
 * chart renders, patches on the render after.
 */
export const ownLayers = (inputs: RenderInputs, me: AgentView): SignedLayer[] => layersFor(inputs.layers ?? [], me);

type RenderFailure = Extract<RenderResult, { ok: false }>;

/** A chart's values with the layers' values merged over them, its references resolved for this agent. */
export function layeredValues(
  values: Record<string, unknown>,
  layers: readonly SignedLayer[],
  me: AgentView,
): { ok: true; values: Record<string, unknown> } | RenderFailure {
  try {
    const merged = valuesAfter(
      values,
      layers.map((l) => l.values),
    );
    return { ok: true, values: resolveAgentReferences(merged, me) };
  } catch (err) {
    return failure(err);
  }
}

/** The render with the layers' patches applied in order; a patch that fails fails the render, as on the hub. */
export function patchedRender(result: RenderResult, layers: readonly SignedLayer[], me: AgentView): RenderResult {
  if (!result.ok) return result;
  try {
    const patches = resolveAgentReferences(
      layers.flatMap((l) => l.patches ?? []),
      me,
    );
    return patches.length ? { ok: true, yaml: applyPatches(result.yaml, patches) } : result;
  } catch (err) {
    return failure(err);
  }
}

/** A reference this agent cannot resolve, or a patch that does not apply: the render fails, as it does on the hub. */
function failure(err: unknown): RenderFailure {
  if (err instanceof PatchFailed || err instanceof UnresolvedReference) return { ok: false, reason: 'invalid', error: err.message };
  throw err;
}

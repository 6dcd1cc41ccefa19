export { capabilitiesOf, capabilityClass, DEFAULT_CAPABILITIES, type Capabilities } from './capabilities.ts';
export { refersToAgent, resolveAgentReferences, unreadableReference, UnresolvedReference, type AgentView } from './agent-references.ts';
export {
  layersFor,
  mergeValues,
  selects,
  valuesAfter,
  type LayerPatch,
  type LayerSelector,
  type LayerTarget,
  type OverrideLayer,
  type SelectableLayer,
} from './layers.ts';
export { applyPatches, mergePatch, PatchFailed } from './patches.ts';
export { signedLayers, type LayerLike, type SignedLayer } from './signed.ts';
export { LAYERS_ENGINE_VERSION } from './version.ts';

/**
 * @brokkr/grants: what a generator may place on an agent's cluster. The grant's defaults, when a
 * grant reaches the whole cluster, and the one placement rule that the agent enforces before every
 * apply and preview and the hub checks when an object is submitted (docs/security.md).
 */
export { DEFAULT_REFUSED_KINDS, defaultNamespaceOf, resolveGrant, wholeClusterInEffect } from './defaults.ts';
export { builtInNamespaced, kindReferenceOf, NAMESPACE_POLICY_KINDS } from './kinds.ts';
export { grantCovers, namespaceMatches } from './namespaces.ts';
export { defaultNamespaceFor, placementRefusal, type Placement, type PlacementScope } from './placement.ts';
export { placementScopeOf } from './scope.ts';
export { grantsDigest } from './digest.ts';
export {
  durationSeconds,
  gateDecision,
  ruleRefusal,
  scheduleBoundary,
  windowCovers,
  windowPhase,
  type GateDecision,
  type GateTarget,
} from './windows.ts';

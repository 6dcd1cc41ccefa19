import type { Grant } from '@brokkr/contracts';
import { kindReferenceOf, NAMESPACE_POLICY_KINDS } from './kinds.ts';
import { grantCovers } from './namespaces.ts';

/** Everything the placement rule needs to judge one generator's object on one agent's cluster. */
export interface PlacementScope {
  generatorId: string;
  generatorName: string;
  grant: Grant;
  /** wholeClusterInEffect(): the grant reaches the whole cluster right now. */
  wholeCluster: boolean;
  /** The agent's own namespace (its credentials live there): undefined when it has none to protect. */
  agentNamespace: string | undefined;
  /** The other tenants' grants on the same agent. */
  others: readonly { generatorName: string; grant: Grant }[];
}

/** One object as the rule sees it: where it goes, and whether its kind is namespaced (undefined: not known). */
export interface Placement {
  apiVersion: string;
  kind: string;
  name: string;
  /** The namespace it will be applied in (already defaulted), for a namespaced kind. */
  namespace: string | undefined;
  namespaced: boolean | undefined;
}

const isNamespaceObject = (p: Placement) => p.kind === 'Namespace' && p.apiVersion === 'v1';

/**
 * Why the object may not be placed, or undefined when it may: the one rule of docs/security.md
 * ("Tenants confined in shared clusters"), applied by the agent before every apply and preview and
 * by the hub when an object is submitted. The reason reads after the object's description
 * ("ConfigMap 'ns/name' …").
 */
export function placementRefusal(scope: PlacementScope, p: Placement): string | undefined {
  const own = ownNamespaceRefusal(scope, p);
  if (own || scope.wholeCluster) return own;
  const kind = kindReferenceOf(p.apiVersion, p.kind);
  if (scope.grant.refused_kinds.includes(kind)) return `is of a kind (${kind}) refused to generator "${scope.generatorName}" on this agent`;
  if (isNamespaceObject(p)) return namespaceRefusal(scope, p.name, 'is a namespace outside');
  if (p.namespaced === false) {
    return scope.grant.cluster_scoped
      ? undefined
      : `is cluster-scoped, and generator "${scope.generatorName}" may place only namespaced objects on this agent`;
  }
  if (p.namespace === undefined) return undefined;
  return namespaceRefusal(scope, p.namespace, 'is in a namespace outside') ?? sharedPolicyRefusal(scope, kind, p.namespace);
}

function ownNamespaceRefusal(scope: PlacementScope, p: Placement): string | undefined {
  const ns = scope.agentNamespace;
  if (ns === undefined) return undefined;
  if ((isNamespaceObject(p) && p.name === ns) || (p.namespace === ns && p.namespaced !== false)) {
    return `is in the agent's own namespace ${ns}, which no stack may reach (the agent's credentials live there)`;
  }
  return undefined;
}

function namespaceRefusal(scope: PlacementScope, namespace: string, what: string): string | undefined {
  if (grantCovers(scope.grant, namespace)) return undefined;
  const granted = [scope.grant.default_namespace, ...scope.grant.namespaces].join(', ');
  return `${what} what generator "${scope.generatorName}" is granted on this agent (${granted})`;
}

function sharedPolicyRefusal(scope: PlacementScope, kind: string, namespace: string): string | undefined {
  if (!NAMESPACE_POLICY_KINDS.has(kind)) return undefined;
  const other = scope.others.find((o) => grantCovers(o.grant, namespace));
  if (!other) return undefined;
  return `is a ${kind} in namespace ${namespace}, which generator "${other.generatorName}" is granted too: such policies go only in namespaces granted to one generator`;
}

/** Where a namespaced object that names no namespace goes: the grant's default, unless it reaches the whole cluster. */
export function defaultNamespaceFor(scope: PlacementScope): string | undefined {
  return scope.wholeCluster ? undefined : scope.grant.default_namespace;
}

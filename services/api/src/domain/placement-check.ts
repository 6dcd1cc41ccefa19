import { isScalar, parseAllDocuments, type Document } from 'yaml';
import { builtInNamespaced, kindReferenceOf, placementRefusal, resolveGrant, type Placement, type PlacementScope } from '@brokkr/grants';
import { grantRefused } from '../errors/catalogue.ts';
import type { ConfinedAgent } from './confined-agents.ts';

/** One object a confined agent would refuse, and why (the reason reads after the object's description). */
export interface PlacementRefusal {
  agent_id: string;
  agent_name: string;
  object: string;
  reason: string;
}

const MAX_REFUSALS_SHOWN = 100;

const text = (doc: Document, path: string[]): string | undefined => {
  const node = doc.getIn(path, true);
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
};

interface Submitted {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string | undefined;
}

/**
 * What each document of already-validated content would place: only the four fields the rule
 * reads, taken from the parsed nodes (aliases are not expanded). A document without them is left
 * to the agent, which refuses it with a clearer reason than the hub could give.
 */
export function submittedObjects(content: string): Submitted[] {
  return parseAllDocuments(content).flatMap((doc) => {
    const apiVersion = text(doc, ['apiVersion']);
    const kind = text(doc, ['kind']);
    const name = text(doc, ['metadata', 'name']);
    return apiVersion && kind && name ? [{ apiVersion, kind, name, namespace: text(doc, ['metadata', 'namespace']) }] : [];
  });
}

function scopeOf(agent: ConfinedAgent): PlacementScope {
  return {
    generatorId: agent.generator_id,
    generatorName: agent.generator_name,
    grant: resolveGrant(agent.grant, agent.generator_id),
    wholeCluster: false,
    // The hub does not know where each agent runs; the agent guards its own namespace itself.
    agentNamespace: undefined,
    others: agent.others.map((o) => ({ generatorName: o.generator_name, grant: resolveGrant(o.grant, o.generator_id) })),
  };
}

function placementOf(scope: PlacementScope, object: Submitted): Placement {
  const namespaced = builtInNamespaced(kindReferenceOf(object.apiVersion, object.kind)) ?? (object.namespace ? true : undefined);
  const namespace = namespaced ? (object.namespace ?? scope.grant.default_namespace) : undefined;
  return { ...object, namespace, namespaced };
}

const describe = (o: Placement) => `${o.kind} '${o.namespace ? `${o.namespace}/` : ''}${o.name}'`;

/**
 * Every (agent, object) pair the stack's confined agents would refuse, by the same rule the agents
 * apply (@brokkr/grants): the api refuses at submit what a targeted agent would refuse at apply,
 * so nothing ships that cannot land everywhere it is sent. `objectsOf` gives what each agent would
 * be served (its own render, when the object is rendered per agent).
 */
export function placementRefusals(
  confined: readonly ConfinedAgent[],
  objectsOf: (agentId: string) => readonly Submitted[],
): PlacementRefusal[] {
  const refusals: PlacementRefusal[] = [];
  for (const agent of confined) {
    const scope = scopeOf(agent);
    for (const object of objectsOf(agent.agent_id)) {
      const placement = placementOf(scope, object);
      const reason = placementRefusal(scope, placement);
      if (reason) refusals.push({ agent_id: agent.agent_id, agent_name: agent.agent_name, object: describe(placement), reason });
    }
  }
  return refusals;
}

/** The 422's details: the refusals (the first hundred), and how many there are in all. */
export function refusalDetails(refusals: readonly PlacementRefusal[]): { refusals: PlacementRefusal[]; total: number } {
  return { refusals: refusals.slice(0, MAX_REFUSALS_SHOWN), total: refusals.length };
}

/** Throws 422 `grant_refused` listing the refusals, if there are any. */
export function refuseMisplaced(refusals: readonly PlacementRefusal[]): void {
  const first = refusals[0];
  if (!first) return;
  const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more refusal(s) in details)` : '';
  throw grantRefused.with(`Agent "${first.agent_name}" would refuse ${first.object}: it ${first.reason}${more}`, refusalDetails(refusals));
}

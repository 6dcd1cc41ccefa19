import type { ConfinedAgent } from '../domain/confined-agents.ts';
import { placementRefusals, refuseMisplaced, submittedObjects } from '../domain/placement-check.ts';
import type { PreparedRenders } from './prepare.ts';

/**
 * Throws 422 `grant_refused` if a confined agent would refuse an object of its own render (a
 * layer's patch may move an object into a namespace the agent's grant does not reach): the same
 * rule the agents apply, checked against what each would be served.
 */
export function refuseMisplacedRenders(confined: readonly ConfinedAgent[], prepared: PreparedRenders): void {
  const parsed = new Map<string, ReturnType<typeof submittedObjects>>();
  const objectsOf = (agentId: string) => {
    let objects = parsed.get(agentId);
    if (!objects) parsed.set(agentId, (objects = submittedObjects(prepared.yamlByAgent.get(agentId) ?? '')));
    return objects;
  };
  refuseMisplaced(placementRefusals(confined, objectsOf));
}

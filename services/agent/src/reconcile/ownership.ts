import type { ObjectMeta } from '../kube/objects.ts';
import { ADOPT_ANNOTATION, OWNER_LABEL, STACK_LABEL } from '../manifest/keys.ts';
import type { KubeObject } from '../manifest/parse.ts';

/**
 * What a stack may do with the live object that has the name of one of its manifest's objects:
 * create it (there is none), apply over it (it carries this stack's label), adopt it (no stack's
 * label, the manifest asks for it and the agent allows adoption), or nothing (another stack's label, or no stack's label and
 * no opt-in). A refusal says why and who holds the object; its `reason` follows the object's
 * description ("ConfigMap 'ns/name' …").
 */
export type Claim = { verdict: 'create' | 'ours' | 'adopt' } | { verdict: 'refused'; reason: string };

/** The claim rule of one stack, as the reconciler and the preview apply it. */
export type ClaimRule = (doc: KubeObject, live: ObjectMeta | undefined) => Claim;

const MAX_MANAGERS = 3;

/** Who wrote the object, from its managed fields (at most a few names). */
function writers(live: ObjectMeta): string {
  const names = [...new Set((live.managedFields ?? []).flatMap((f) => (f.manager ? [f.manager] : [])))];
  if (!names.length) return '';
  const shown = names.slice(0, MAX_MANAGERS).join(', ');
  return ` (written by ${shown}${names.length > MAX_MANAGERS ? ', …' : ''})`;
}

/**
 * One tenant's stack never takes over (and so never later prunes) an object of another stack or
 * one Brokkr did not create: docs/security.md, "Agents in shared clusters". The stack label is
 * the owner's mark because the agent prunes and deletes by it.
 */
export function claimFor(stackId: string, doc: KubeObject, live: ObjectMeta | undefined, adoptionEnabled: boolean): Claim {
  if (!live) return { verdict: 'create' };
  const holder = live.labels?.[STACK_LABEL];
  if (holder === stackId) return { verdict: 'ours' };
  if (holder) {
    return {
      verdict: 'refused',
      reason: `belongs to stack ${holder} (label ${STACK_LABEL}): a stack never applies over another stack's object`,
    };
  }
  const exists = `already exists and no stack manages it${writers(live)}: not applied over`;
  if (!adoptionEnabled) {
    return {
      verdict: 'refused',
      reason: `${exists} (adoption is off for this stack here: it needs BROKKR__AGENT__ADOPTION_ENABLED and a grant with adoption)`,
    };
  }
  if (doc.metadata.annotations?.[ADOPT_ANNOTATION] === 'true') return { verdict: 'adopt' };
  return {
    verdict: 'refused',
    reason: `${exists}; to adopt it into this stack, annotate it in the manifest with ${ADOPT_ANNOTATION}: "true"`,
  };
}

export const stackClaim =
  (stackId: string, adoptionEnabled: boolean): ClaimRule =>
  (doc, live) =>
    claimFor(stackId, doc, live, adoptionEnabled);

/**
 * Whether the apply stamps our owner label, which puts the object in the agent's inventory (so it
 * is pruned and deleted with its stack): a new object, one already ours, or one being adopted.
 */
export function ownedAfterApply(live: ObjectMeta | undefined, agentId: string, claim: Claim | undefined): boolean {
  return !live || claim?.verdict === 'adopt' || live.labels?.[OWNER_LABEL] === agentId;
}

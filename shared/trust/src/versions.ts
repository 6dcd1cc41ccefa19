import { refuse, type Refusal } from './refusal.ts';

/**
 * What an agent keeps in its own cluster about a stack: the version it applied last (and its
 * content digest), the highest it ever took, and the rollbacks that highest version allows.
 */
export interface StackRecord {
  version: number;
  digest: string;
  highest: number;
  highestDigest: string;
  allowTo: number[];
}

/** How a signed version relates to what the agent took before. */
export type VersionStep = 'first' | 'newer' | 'same' | 'rollback';

/**
 * Newer than anything taken: fine. The version applied (or the highest) again with the same
 * content: fine (a resync, a restart). Lower: only a rollback the highest version's statement lists.
 * The same version with other content, or any other lower one: `rollback_rejected`.
 */
export function versionStep(record: StackRecord | undefined, version: number, digest: string): VersionStep | Refusal {
  if (!record) return 'first';
  if (version > record.highest) return 'newer';
  if ((version === record.version && digest === record.digest) || (version === record.highest && digest === record.highestDigest))
    return 'same';
  if (version === record.version || version === record.highest)
    return refuse('rollback_rejected', `version ${version} was signed again with other content`);
  if (version < record.highest && record.allowTo.includes(version)) return 'rollback';
  return refuse(
    'rollback_rejected',
    `version ${version} is older than version ${record.highest} taken before, which allows a rollback to ${record.allowTo.length ? record.allowTo.join(', ') : 'no version'}`,
  );
}

/** The record after taking `version` (its statement's rollback list counts only when it becomes the highest). */
export function recordAfter(record: StackRecord | undefined, version: number, digest: string, allowTo: number[]): StackRecord {
  if (!record || version > record.highest) return { version, digest, highest: version, highestDigest: digest, allowTo };
  return { ...record, version, digest };
}

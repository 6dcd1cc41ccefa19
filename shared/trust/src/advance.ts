import {
  MetadataError,
  nextRoot,
  readDocument,
  rootSchema,
  verifyRevocations,
  verifyTimestamp,
  type Revocations,
  type Root,
  type Timestamp,
} from './metadata.ts';

/** The trust metadata an agent holds: the root it trusts now, and the newest revocation list and timestamp it accepted. */
export interface MetadataState {
  root: Root;
  /** The envelope of `root` when it came through the hub (an installed root needs none). */
  rootEnvelope: unknown;
  revocations: Revocations | undefined;
  revocationsEnvelope: unknown;
  timestamp: Timestamp | undefined;
  timestampEnvelope: unknown;
}

/** What the hub relays: every root version it has (ascending), the newest revocation list and timestamp. */
export interface RelayedMetadata {
  roots: unknown[];
  revocations: unknown;
  timestamp: unknown;
}

export interface Advanced {
  state: MetadataState;
  /** What was relayed but not accepted (a forged or out-of-order document), for the log. */
  problems: string[];
}

/**
 * Takes what verifies: each root version in turn (signed by the threshold of the one before and its
 * own), then the revocation list and the timestamp if they verify under the newest root and are not
 * older than the ones held. Nothing older or unverified replaces anything.
 */
export function advanceMetadata(current: MetadataState, relayed: RelayedMetadata): Advanced {
  const problems: string[] = [];
  let state = current;
  for (const envelope of orderedRoots(relayed.roots)) {
    if (envelope.version <= state.root.version) continue;
    try {
      state = { ...state, root: nextRoot(state.root, envelope.envelope), rootEnvelope: envelope.envelope };
    } catch (err) {
      problems.push(`root: ${(err as Error).message}`);
      break;
    }
  }
  if (relayed.revocations) state = take(state, problems, 'revocation list', () => takeRevocations(state, relayed.revocations));
  if (relayed.timestamp && state.root.roles.timestamp)
    state = take(state, problems, 'timestamp', () => takeTimestamp(state, relayed.timestamp));
  return { state, problems };
}

function take(state: MetadataState, problems: string[], what: string, fn: () => MetadataState): MetadataState {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof MetadataError)) throw err;
    problems.push(`${what}: ${err.message}`);
    return state;
  }
}

function takeRevocations(state: MetadataState, envelope: unknown): MetadataState {
  const revocations = verifyRevocations(state.root, envelope);
  const held = state.revocations?.version ?? 0;
  if (revocations.version < held) throw new MetadataError(`v${revocations.version} relayed, v${held} held`);
  return revocations.version === held ? state : { ...state, revocations, revocationsEnvelope: envelope };
}

function takeTimestamp(state: MetadataState, envelope: unknown): MetadataState {
  const timestamp = verifyTimestamp(state.root, envelope);
  const held = state.timestamp?.version ?? 0;
  if (timestamp.version < held) throw new MetadataError(`v${timestamp.version} relayed, v${held} held`);
  return timestamp.version === held ? state : { ...state, timestamp, timestampEnvelope: envelope };
}

function orderedRoots(roots: unknown[]): { version: number; envelope: unknown }[] {
  return roots
    .flatMap((envelope) => {
      try {
        return [{ version: readDocument(envelope, rootSchema).document.version, envelope }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => a.version - b.version);
}

/**
 * Why the metadata is stale, or undefined when it is fresh or the root names no timestamp signers
 * (then freshness is not enforced). Stale: no timestamp yet, one past its expiry or older than
 * `maxAgeMs`, or one naming a root or revocation list newer than the agent was given (the hub
 * withholds them).
 */
export function staleness(state: MetadataState, maxAgeMs: number, now: Date): string | undefined {
  if (!state.root.roles.timestamp) return undefined;
  const t = state.timestamp;
  if (!t) return 'no signed timestamp has been relayed yet';
  if (Date.parse(t.expires) <= now.getTime()) return `the newest timestamp (v${t.version}) expired at ${t.expires}`;
  if (Date.parse(t.issuedAt) + maxAgeMs <= now.getTime())
    return `the newest timestamp (v${t.version}) was issued at ${t.issuedAt}, longer ago than the policy's maximum age`;
  if (t.root > state.root.version) return `timestamp v${t.version} names root v${t.root}, the hub relayed up to v${state.root.version}`;
  const revocations = state.revocations?.version ?? 0;
  if (t.revocations > revocations)
    return `timestamp v${t.version} names revocation list v${t.revocations}, the hub relayed v${revocations}`;
  return undefined;
}

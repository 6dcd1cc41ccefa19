import { MetadataError, readDocument, rootSchema, verifyRevocations, verifyTimestamp, type MetadataState, type Root } from '@brokkr/trust';
import type { PersistedTrust } from './state-store.ts';

/**
 * The metadata an agent starts from: the installed root, or the newer root it took through the hub
 * before a restart (kept in its cluster), and the revocation list and timestamp it took, checked
 * again against that root. An installed root newer than the kept one wins (an operator re-installed).
 */
export function startingMetadata(installed: Root, persisted: PersistedTrust): MetadataState {
  const root = keptRoot(persisted.root, installed);
  const state: MetadataState = {
    root: root.document,
    rootEnvelope: root.envelope,
    revocations: undefined,
    revocationsEnvelope: undefined,
    timestamp: undefined,
    timestampEnvelope: undefined,
  };
  const revocations = attempt(() => verifyRevocations(state.root, persisted.revocations));
  if (revocations) Object.assign(state, { revocations, revocationsEnvelope: persisted.revocations });
  const timestamp = state.root.roles.timestamp ? attempt(() => verifyTimestamp(state.root, persisted.timestamp)) : undefined;
  if (timestamp) Object.assign(state, { timestamp, timestampEnvelope: persisted.timestamp });
  return state;
}

function keptRoot(envelope: unknown, installed: Root): { document: Root; envelope: unknown } {
  const kept = envelope ? attempt(() => readDocument(envelope, rootSchema).document) : undefined;
  return kept && kept.version > installed.version ? { document: kept, envelope } : { document: installed, envelope: null };
}

function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (err instanceof MetadataError) return undefined;
    throw err;
  }
}

/** Whether anything an agent checks against changed: the root, the revocations, the timestamp. */
export function metadataVersions(state: MetadataState): string {
  return `${state.root.version}:${state.revocations?.version ?? 0}:${state.timestamp?.version ?? 0}`;
}

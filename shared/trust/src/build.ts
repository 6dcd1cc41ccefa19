import type { KeyObject } from 'node:crypto';
import { signStatementBundle, type SerializedBundle } from './bundle.ts';
import { sha256Hex } from './digest.ts';
import { keyIdOf, publicKeyPem } from './keys.ts';
import {
  REVOCATIONS_TYPE,
  ROOT_TYPE,
  TIMESTAMP_TYPE,
  type KeylessIdentity,
  type Revocations,
  type Root,
  type Timestamp,
} from './metadata.ts';
import { intentStatement, workOrderStatement, type IntentPredicate, type WorkOrderPredicate } from './statement.ts';

export interface RootSpec {
  version: number;
  rootKeys: KeyObject[];
  threshold: number;
  timestampKeys?: KeyObject[];
  generators: { name: string; keys?: KeyObject[]; keyless?: KeylessIdentity[]; stacks: string[]; workOrders?: boolean }[];
}

/** A root document from keys (private or public: only the public halves go in). */
export function buildRoot(spec: RootSpec): Root {
  const keys: Root['keys'] = {};
  const ids = (list: KeyObject[] = []) =>
    list.map((key) => {
      const id = keyIdOf(key);
      keys[id] = { publicKey: publicKeyPem(key) };
      return id;
    });
  const root = ids(spec.rootKeys);
  const timestamp = spec.timestampKeys?.length ? { keyids: ids(spec.timestampKeys), threshold: 1 } : undefined;
  const generators = spec.generators.map((g) => ({
    name: g.name,
    keyids: ids(g.keys),
    keyless: g.keyless ?? [],
    scope: { stacks: g.stacks, workOrders: g.workOrders ?? false },
  }));
  return {
    _type: ROOT_TYPE,
    version: spec.version,
    keys,
    roles: { root: { keyids: root, threshold: spec.threshold }, ...(timestamp ? { timestamp } : {}) },
    generators,
  };
}

export function buildRevocations(
  version: number,
  revoked: { keys?: KeyObject[]; keyids?: string[]; identities?: KeylessIdentity[] },
  now = new Date(),
): Revocations {
  return {
    _type: REVOCATIONS_TYPE,
    version,
    issuedAt: now.toISOString(),
    keyids: [...(revoked.keyids ?? []), ...(revoked.keys ?? []).map(keyIdOf)],
    identities: revoked.identities ?? [],
  };
}

export function buildTimestamp(spec: { version: number; root: number; revocations: number; validForMs: number; now?: Date }): Timestamp {
  const now = spec.now ?? new Date();
  return {
    _type: TIMESTAMP_TYPE,
    version: spec.version,
    issuedAt: now.toISOString(),
    expires: new Date(now.getTime() + spec.validForMs).toISOString(),
    root: spec.root,
    revocations: spec.revocations,
  };
}

/** A generator's signature of a deployment object's content: the statement, as a keyed Sigstore bundle. */
export function signIntent(content: string, predicate: IntentPredicate, key: KeyObject): SerializedBundle {
  return signStatementBundle(intentStatement(sha256Hex(content), predicate), key);
}

export function signWorkOrder(content: string, predicate: WorkOrderPredicate, key: KeyObject): SerializedBundle {
  return signStatementBundle(workOrderStatement(sha256Hex(content), predicate), key);
}

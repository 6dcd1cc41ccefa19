import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { envelopeSchema, payloadOf, signEnvelope, verifiedKeyIds, type Envelope } from './dsse.ts';
import { keyIdOf, publicKeyFromPem } from './keys.ts';
import { REVOCATIONS_TYPE, ROOT_TYPE, TIMESTAMP_TYPE, TRUST_PAYLOAD_TYPE } from './statement.ts';

export { REVOCATIONS_TYPE, ROOT_TYPE, TIMESTAMP_TYPE, TRUST_PAYLOAD_TYPE };

/**
 * The trust metadata, TUF-style: a root (its keys and threshold, the generators it delegates to
 * with their keys and scopes, and the timestamp signers), a revocation list the root signs, and a
 * timestamp that expires. Each is a DSSE envelope of this payload type, signed by as many keys as
 * its role's threshold asks. The hub stores and relays them; it holds none of the keys.
 */

const keyId = z.string().regex(/^[0-9a-f]{64}$/);
const role = z.object({ keyids: z.array(keyId).min(1), threshold: z.number().int().positive() });
const version = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A keyless (Sigstore) identity: the OIDC issuer exactly, the certificate's subject by a regular expression (anchored). */
export const keylessIdentitySchema = z.object({ issuer: z.string().min(1), subject: z.string().min(1) });
export type KeylessIdentity = z.output<typeof keylessIdentitySchema>;

export const generatorSchema = z.object({
  name: z.string().min(1),
  keyids: z.array(keyId).default([]),
  keyless: z.array(keylessIdentitySchema).default([]),
  /** Stacks by id, or "*" for every stack; workOrders: may sign work orders. */
  scope: z.object({ stacks: z.array(z.string().min(1)).default([]), workOrders: z.boolean().default(false) }),
});
export type GeneratorDelegation = z.output<typeof generatorSchema>;

export const rootSchema = z
  .object({
    _type: z.literal(ROOT_TYPE),
    version,
    keys: z.record(keyId, z.object({ publicKey: z.string().min(1) })),
    roles: z.object({ root: role, timestamp: role.optional() }),
    generators: z.array(generatorSchema).default([]),
  })
  .superRefine((root, ctx) => {
    for (const id of [...root.roles.root.keyids, ...(root.roles.timestamp?.keyids ?? []), ...root.generators.flatMap((g) => g.keyids)])
      if (!root.keys[id]) ctx.addIssue({ code: 'custom', message: `key ${id} is named by a role but not in keys` });
    for (const r of [root.roles.root, root.roles.timestamp])
      if (r && r.threshold > new Set(r.keyids).size) ctx.addIssue({ code: 'custom', message: 'a threshold above its number of keys' });
  });
export type Root = z.output<typeof rootSchema>;

export const revocationsSchema = z.object({
  _type: z.literal(REVOCATIONS_TYPE),
  version,
  issuedAt: z.iso.datetime({ offset: true }),
  keyids: z.array(keyId).default([]),
  /** Keyless identities revoked: the exact issuer and certificate subject. */
  identities: z.array(keylessIdentitySchema).default([]),
});
export type Revocations = z.output<typeof revocationsSchema>;

export const timestampSchema = z.object({
  _type: z.literal(TIMESTAMP_TYPE),
  version,
  issuedAt: z.iso.datetime({ offset: true }),
  expires: z.iso.datetime({ offset: true }),
  /** The newest root and revocation list when it was signed: an agent holding older ones is being kept from them. */
  root: version,
  revocations: z.number().int().nonnegative(),
});
export type Timestamp = z.output<typeof timestampSchema>;

export class MetadataError extends Error {}

/** The root's keys by id, each checked to be the key its id names. */
export function rootKeys(root: Root): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const [id, { publicKey }] of Object.entries(root.keys)) {
    const key = publicKeyFromPem(publicKey);
    if (keyIdOf(key) !== id) throw new MetadataError(`key ${id} is not the id of its public key (${keyIdOf(key)})`);
    keys.set(id, key);
  }
  return keys;
}

/** The document inside an envelope of trust metadata, parsed with `schema` (no signature checked). */
export function readDocument<T>(envelope: unknown, schema: z.ZodType<T>): { envelope: Envelope; document: T } {
  const parsed = envelopeSchema.safeParse(envelope);
  if (!parsed.success) throw new MetadataError('not a DSSE envelope');
  if (parsed.data.payloadType !== TRUST_PAYLOAD_TYPE)
    throw new MetadataError(`payload type ${parsed.data.payloadType}, not ${TRUST_PAYLOAD_TYPE}`);
  let json: unknown;
  try {
    json = JSON.parse(payloadOf(parsed.data).toString('utf8'));
  } catch {
    throw new MetadataError('the payload is not JSON');
  }
  const document = schema.safeParse(json);
  if (!document.success) throw new MetadataError(`not a valid document: ${document.error.issues[0]?.message ?? 'unexpected shape'}`);
  return { envelope: parsed.data, document: document.data };
}

/** Throws unless at least `threshold` of the role's keys signed the envelope. */
export function requireThreshold(
  envelope: Envelope,
  keys: Map<string, KeyObject>,
  r: { keyids: string[]; threshold: number },
  what: string,
): void {
  const roleKeys = new Map(r.keyids.flatMap((id) => (keys.has(id) ? [[id, keys.get(id)!] as const] : [])));
  const signed = verifiedKeyIds(envelope, roleKeys).size;
  if (signed < r.threshold) throw new MetadataError(`${what}: ${signed} valid signature(s) of ${r.threshold} required`);
}

/**
 * The next root, when `envelope` holds version current+1 signed by the threshold of the current
 * root's keys and of its own (the old keys vouch for the change, the new ones hold their keys).
 */
export function nextRoot(current: Root, envelope: unknown): Root {
  const { envelope: env, document } = readDocument(envelope, rootSchema);
  if (document.version !== current.version + 1)
    throw new MetadataError(`root version ${document.version} does not follow ${current.version}`);
  requireThreshold(env, rootKeys(current), current.roles.root, `root v${document.version} by the keys of root v${current.version}`);
  requireThreshold(env, rootKeys(document), document.roles.root, `root v${document.version} by its own keys`);
  return document;
}

export function verifyRevocations(root: Root, envelope: unknown): Revocations {
  const { envelope: env, document } = readDocument(envelope, revocationsSchema);
  requireThreshold(env, rootKeys(root), root.roles.root, `revocation list v${document.version}`);
  return document;
}

export function verifyTimestamp(root: Root, envelope: unknown): Timestamp {
  const { envelope: env, document } = readDocument(envelope, timestampSchema);
  if (!root.roles.timestamp) throw new MetadataError(`root v${root.version} names no timestamp signers`);
  requireThreshold(env, rootKeys(root), root.roles.timestamp, `timestamp v${document.version}`);
  return document;
}

/** Signs a trust document with each key (a threshold's holders may also sign one after another: dsse.ts countersign). */
export function signDocument(document: Root | Revocations | Timestamp, keys: KeyObject[]): Envelope {
  return signEnvelope(TRUST_PAYLOAD_TYPE, Buffer.from(JSON.stringify(document)), keys);
}

import { readSignedIntent, SignatureFormatError, type SignedIntent } from './bundle.ts';
import { payloadOf } from './dsse.ts';
import { sha256Hex } from './digest.ts';
import type { Revocations, Root } from './metadata.ts';
import { refuse, type Refusal } from './refusal.ts';
import { identifySigner, SignerError, type Signer } from './signer.ts';
import type { TrustMaterial } from './sigstore-root.ts';
import {
  IN_TOTO_PAYLOAD_TYPE,
  intentStatementSchema,
  workOrderStatementSchema,
  type IntentStatement,
  type WorkOrderStatement,
} from './statement.ts';
import type { RenderedKind } from './render-inputs.ts';
import { targets, type LocalIdentity } from './targeting.ts';
import { recordAfter, versionStep, type StackRecord, type VersionStep } from './versions.ts';

/** What an agent checks against: its trust root now, the revocations, whether its metadata is fresh, who it is, the time. */
export interface TrustView {
  root: Root;
  revocations: Revocations | undefined;
  /** Why the metadata is stale (no new version is taken then); undefined when fresh or when the root asks for no timestamp. */
  stale: string | undefined;
  keyless: TrustMaterial | undefined;
  identity: LocalIdentity;
  now: Date;
}

/** A deployment object as the hub served it, and the signature it relayed for it (undefined: none). */
export interface ServedObject {
  stackId: string;
  /** The exact bytes the hub served (what gets applied). */
  content: string;
  deletion: boolean;
  signed: unknown;
  /**
   * A chart or an overlay the agent renders itself: `content` is then the canonical document of
   * the inputs it was relayed (render-inputs.ts), and the statement must be of this kind.
   */
  rendered?: RenderedKind;
}

export type IntentVerdict =
  { ok: true; statement: IntentStatement; signer: Signer; step: VersionStep; record: StackRecord } | { ok: false; refusal: Refusal };

type Checked<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };
const no = (refusal: Refusal) => ({ ok: false, refusal }) as const;

/**
 * Every check an agent makes before it applies (or deletes, for a marker) a deployment object:
 * the signature chains to the trust root through the generator the statement names, whose scope
 * holds the stack and whose key or identity is not revoked; the statement is for this stack, for
 * exactly these bytes, of the right kind and not expired; its targeting names this agent as the
 * agent knows itself; its version is newer than what the agent took (or a rollback the newer
 * version allows); and a new version is taken only while the metadata is fresh.
 */
export function checkIntent(view: TrustView, object: ServedObject, record: StackRecord | undefined): IntentVerdict {
  const verified = verifyStatement(view, object.signed, intentStatementSchema);
  if (!verified.ok) return verified;
  const { statement, signer } = verified.value;
  const p = statement.predicate;
  const digest = sha256Hex(object.content);
  const mismatch = bindingRefusal(statement, signer, object, digest) ?? commonChecks(view, p);
  if (mismatch) return no(mismatch);
  const step = versionStep(record, p.version, digest);
  if (typeof step !== 'string') return no(step);
  if ((step === 'first' || step === 'newer') && view.stale)
    return no(refuse('trust_metadata_stale', `version ${p.version} is not taken while the trust metadata is stale: ${view.stale}`));
  return { ok: true, statement, signer, step, record: recordAfter(record, p.version, digest, p.rollback?.allowTo ?? []) };
}

/** The statement is for this stack (within the signer's scope), these exact bytes and this kind of object. */
function bindingRefusal(statement: IntentStatement, signer: Signer, object: ServedObject, digest: string): Refusal | undefined {
  const p = statement.predicate;
  const scope = signer.generator.scope.stacks;
  if (!scope.includes('*') && !scope.includes(p.stack))
    return refuse('signature_invalid', `generator "${signer.generator.name}" may not sign for stack ${p.stack}`);
  if (p.stack !== object.stackId) return refuse('signature_invalid', `it was signed for stack ${p.stack}, not ${object.stackId}`);
  if (!statement.subject.some((s) => s.digest.sha256 === digest))
    return refuse('signature_invalid', `its content (sha256 ${digest.slice(0, 12)}…) is not what was signed`);
  const kind = object.rendered ?? (object.deletion ? 'deletion' : 'raw');
  if (p.kind !== kind) return refuse('signature_invalid', `it was signed as kind ${p.kind}, and served as ${kind}`);
  return undefined;
}

export type WorkOrderVerdict = { ok: true; statement: WorkOrderStatement; signer: Signer } | { ok: false; refusal: Refusal };

/** A work order: signed by a generator allowed work orders, for these bytes and this work type, aimed at this agent, not expired. */
export function checkWorkOrder(view: TrustView, order: { workType: string; content: string; signed: unknown }): WorkOrderVerdict {
  const verified = verifyStatement(view, order.signed, workOrderStatementSchema);
  if (!verified.ok) return verified;
  const { statement, signer } = verified.value;
  const p = statement.predicate;
  if (!signer.generator.scope.workOrders)
    return no(refuse('signature_invalid', `generator "${signer.generator.name}" may not sign work orders`));
  const digest = sha256Hex(order.content);
  if (!statement.subject.some((s) => s.digest.sha256 === digest))
    return no(refuse('signature_invalid', 'its content is not what was signed'));
  if (p.workType !== order.workType) return no(refuse('signature_invalid', `it was signed as a ${p.workType} order`));
  const common = commonChecks(view, p);
  if (common) return no(common);
  if (view.stale) return no(refuse('trust_metadata_stale', `no work order is run while the trust metadata is stale: ${view.stale}`));
  return { ok: true, statement, signer };
}

function commonChecks(
  view: TrustView,
  p: { expires?: string | undefined; targeting?: IntentStatement['predicate']['targeting'] },
): Refusal | undefined {
  if (p.expires && Date.parse(p.expires) <= view.now.getTime()) return refuse('signature_invalid', `the signature expired at ${p.expires}`);
  if (!targets(p.targeting, view.identity))
    return refuse(
      'target_not_authorized',
      `agent ${view.identity.cluster}/${view.identity.name} is not among the agents it was signed for`,
    );
  return undefined;
}

type StatementSchema<S> = { safeParse(v: unknown): { success: true; data: S } | { success: false } };

interface Verified {
  root: Root;
  keyless: TrustMaterial | undefined;
  schema: unknown;
  result: Checked<{ statement: IntentStatement | WorkOrderStatement; signer: Signer }>;
}

/**
 * What verifying a relayed signature found, by the signature object itself and remembered with the
 * root and keyless material it was checked against. An agent screens its whole target state on
 * every change and its relay hands it the same object until it asks the hub again, so a signature
 * is verified once (a keyless one costs milliseconds: certificate chain, log entry) until the root
 * rotates. Revocations, expiry, targeting and versions are judged on every check.
 */
const verifiedSignatures = new WeakMap<object, Verified>();

/** The statement of a relayed signature, parsed with `schema`, and who signed it; refused when any of that fails or the signer is revoked. */
function verifyStatement<S extends IntentStatement | WorkOrderStatement>(
  view: TrustView,
  signed: unknown,
  schema: StatementSchema<S>,
): Checked<{ statement: S; signer: Signer }> {
  if (signed === undefined || signed === null) return no(refuse('signature_invalid', 'the hub relayed no signature for it'));
  const cached = typeof signed === 'object' ? verifiedSignatures.get(signed) : undefined;
  const fresh = cached && cached.root === view.root && cached.keyless === view.keyless && cached.schema === schema;
  const verified = fresh ? (cached.result as Checked<{ statement: S; signer: Signer }>) : readAndIdentify(view, signed, schema);
  if (!fresh && typeof signed === 'object')
    verifiedSignatures.set(signed, { root: view.root, keyless: view.keyless, schema, result: verified });
  if (!verified.ok) return verified;
  const revoked = revocationOf(view.revocations, verified.value.signer);
  if (revoked) return no(revoked);
  return verified;
}

/** The signature read, its statement parsed, its signer found in the root (no revocation judged). */
function readAndIdentify<S extends IntentStatement | WorkOrderStatement>(
  view: TrustView,
  signed: unknown,
  schema: StatementSchema<S>,
): Checked<{ statement: S; signer: Signer }> {
  let intent: SignedIntent;
  try {
    intent = readSignedIntent(signed);
  } catch (err) {
    if (err instanceof SignatureFormatError) return no(refuse('signature_invalid', err.message));
    throw err;
  }
  if (intent.envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return no(refuse('signature_invalid', `payload type ${intent.envelope.payloadType}`));
  const statement = schema.safeParse(parseJson(payloadOf(intent.envelope)));
  if (!statement.success) return no(refuse('signature_invalid', 'the signed payload is not a statement of the expected kind'));
  const signer = signerOf(view, intent, statement.data.predicate.generator);
  if (!signer.ok) return signer;
  return { ok: true, value: { statement: statement.data, signer: signer.value } };
}

function signerOf(view: TrustView, intent: SignedIntent, generator: string): Checked<Signer> {
  try {
    return { ok: true, value: identifySigner(intent, view.root, generator, view.keyless) };
  } catch (err) {
    if (err instanceof SignerError) return no(refuse('signature_invalid', err.message));
    throw err;
  }
}

function revocationOf(revocations: Revocations | undefined, signer: Signer): Refusal | undefined {
  if (!revocations) return undefined;
  if ('keyid' in signer && revocations.keyids.includes(signer.keyid))
    return refuse(
      'key_revoked',
      `key ${signer.keyid.slice(0, 12)}… of generator "${signer.generator.name}" is revoked (revocation list v${revocations.version})`,
    );
  if (
    'identity' in signer &&
    revocations.identities.some((i) => i.issuer === signer.identity.issuer && i.subject === signer.identity.subject)
  )
    return refuse('key_revoked', `identity ${signer.identity.subject} is revoked (revocation list v${revocations.version})`);
  return undefined;
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

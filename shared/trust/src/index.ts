/**
 * @brokkr/trust: signed intent. What a generator signs (an in-toto statement about a stack's
 * content, in a DSSE envelope, carried as a Sigstore bundle), the trust metadata that says whose
 * signatures count (a root signed by a threshold of keys, revocations, an expiring timestamp), and
 * the checks an agent makes before it applies, prunes, deletes or runs anything (docs/signatures.md).
 */
export { sha256Hex } from './digest.ts';
export {
  algorithmOf,
  generateSigningKey,
  keyIdOf,
  KeyError,
  privateKeyFromPem,
  privateKeyPem,
  publicKeyFromPem,
  publicKeyPem,
  signBytes,
  verifyBytes,
  type KeyAlgorithm,
} from './keys.ts';
export { countersign, envelopeSchema, payloadOf, preAuthEncoding, signEnvelope, verifiedKeyIds, type Envelope } from './dsse.ts';
export {
  IN_TOTO_PAYLOAD_TYPE,
  INTENT_PREDICATE_TYPE,
  intentPredicateSchema,
  intentStatement,
  intentStatementSchema,
  stackSubjectName,
  STATEMENT_TYPE,
  targetingSchema,
  WORK_ORDER_PREDICATE_TYPE,
  workOrderStatement,
  workOrderStatementSchema,
  type IntentPredicate,
  type IntentStatement,
  type Targeting,
  type WorkOrderPredicate,
  type WorkOrderStatement,
} from './statement.ts';
export {
  canonicalJson,
  helmReleaseName,
  RENDER_INPUTS_TYPE,
  renderInputDigests,
  renderInputsContent,
  renderInputsDocument,
  renderInputsMismatch,
  type ArchiveInputValues,
  type RenderedKind,
  type RenderInputDigest,
  type RenderInputValues,
  type RenderOptions,
  type SignedLayerSet,
  type TemplateInputValues,
  type YamlInputValues,
} from './render-inputs.ts';
export { namedInputMismatch } from './named-mismatch.ts';
export { readSignedIntent, signStatementBundle, SignatureFormatError, type SerializedBundle, type SignedIntent } from './bundle.ts';
export {
  MetadataError,
  nextRoot,
  readDocument,
  REVOCATIONS_TYPE,
  revocationsSchema,
  ROOT_TYPE,
  rootKeys,
  rootSchema,
  signDocument,
  TIMESTAMP_TYPE,
  timestampSchema,
  TRUST_PAYLOAD_TYPE,
  verifyRevocations,
  verifyTimestamp,
  type GeneratorDelegation,
  type KeylessIdentity,
  type Revocations,
  type Root,
  type Timestamp,
} from './metadata.ts';
export { identifySigner, SignerError, type Signer } from './signer.ts';
export { keylessTrustMaterial, type TrustMaterial } from './sigstore-root.ts';
export { targets, type LocalIdentity } from './targeting.ts';
export { refusalMessage, type Refusal, type RefusalReason } from './refusal.ts';
export { recordAfter, versionStep, type StackRecord, type VersionStep } from './versions.ts';
export { checkIntent, checkWorkOrder, type IntentVerdict, type ServedObject, type TrustView, type WorkOrderVerdict } from './check.ts';
export { advanceMetadata, staleness, type Advanced, type MetadataState, type RelayedMetadata } from './advance.ts';
export { durationMs, parseTrustPolicy, TrustPolicyError, trustPolicySchema, type TrustPolicy } from './policy.ts';
export { buildRevocations, buildRoot, buildTimestamp, signIntent, signWorkOrder, type RootSpec } from './build.ts';

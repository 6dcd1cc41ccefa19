import { z } from 'zod';

/**
 * The trust documents' payload type and document types (metadata.ts reads them; the hub, which
 * imports this module alone through `@brokkr/trust/statement`, learns a document's kind from them).
 */
export const TRUST_PAYLOAD_TYPE = 'application/vnd.brokkr.trust+json';
export const ROOT_TYPE = 'https://brokkr.dev/trust/root/v1';
export const REVOCATIONS_TYPE = 'https://brokkr.dev/trust/revocations/v1';
export const TIMESTAMP_TYPE = 'https://brokkr.dev/trust/timestamp/v1';

/** The in-toto Statement (v1) a generator signs, inside a DSSE envelope of this payload type. */
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
/** The predicate of a deployment object's intent (`cosign verify-blob-attestation --type` takes this URI). */
export const INTENT_PREDICATE_TYPE = 'https://brokkr.dev/intent/v1';
/** The predicate of a signed work order. */
export const WORK_ORDER_PREDICATE_TYPE = 'https://brokkr.dev/work-order/v1';

const digestSet = z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/) }).catchall(z.string());

/**
 * Which agents may act on it, by what each agent is configured with in its own cluster (never what
 * the hub says about it): its name (`name` or `cluster/name`), or every label of `labels` among its
 * local labels. Absent: every agent whose trust policy accepts the signer for the stack.
 */
export const targetingSchema = z.object({
  agents: z.array(z.string().min(1)).optional(),
  labels: z.array(z.string().min(1)).optional(),
});
export type Targeting = z.output<typeof targetingSchema>;

/**
 * What a render input is, when the object is rendered (helm, kustomize, template): each input by name and
 * digest. The statement's subject is then the digest of the canonical document of the inputs
 * (render-inputs.ts), and the agent renders them itself.
 */
export const renderInputSchema = z.object({ name: z.string().min(1), digest: digestSet });

export const intentPredicateSchema = z.object({
  /** The stack (its id on the hub): the signature is worth nothing for any other stack. */
  stack: z.guid(),
  /** The generator of the trust policy that signs (its name there): its scope must include the stack. */
  generator: z.string().min(1),
  /** Monotonic per stack: an agent never takes a version below one it applied, except a rollback allowed below. */
  version: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  /**
   * raw: the YAML as posted; deletion: a deletion marker; helm, kustomize, template: rendered by the
   * agent from the signed `inputs`; yaml: the YAML as posted, with the stack's override layers (signed
   * `inputs` too) applied by the agent.
   */
  kind: z.enum(['raw', 'deletion', 'template', 'helm', 'kustomize', 'yaml']),
  inputs: z.array(renderInputSchema).optional(),
  /** The renderer the inputs are meant for (the agent refuses to render with another). */
  renderer: z.string().optional(),
  targeting: targetingSchema.optional(),
  /** Earlier versions an automatic rollback (a rollout's) may return to once this version was applied. */
  rollback: z.object({ allowTo: z.array(z.number().int().positive()) }).optional(),
  issuedAt: z.iso.datetime({ offset: true }),
  expires: z.iso.datetime({ offset: true }).optional(),
});
export type IntentPredicate = z.output<typeof intentPredicateSchema>;

export const workOrderPredicateSchema = z.object({
  generator: z.string().min(1),
  workType: z.string().min(1),
  targeting: targetingSchema.optional(),
  /** Unique per order: an agent runs one signed order once. */
  nonce: z.string().min(8),
  issuedAt: z.iso.datetime({ offset: true }),
  /** Required: a signed order is a one-off, and a replay after this is refused. */
  expires: z.iso.datetime({ offset: true }),
});
export type WorkOrderPredicate = z.output<typeof workOrderPredicateSchema>;

const subjectSchema = z.object({ name: z.string(), digest: digestSet });

/**
 * Statements are made as v1; v0.1 is read too: `cosign attest-blob` still writes it, and the fields
 * checked here (subject digests, predicate type, predicate) mean the same in both.
 */
const STATEMENT_TYPE_V01 = 'https://in-toto.io/Statement/v0.1';
const statementBase = { _type: z.enum([STATEMENT_TYPE, STATEMENT_TYPE_V01]), subject: z.array(subjectSchema).min(1) };

export const intentStatementSchema = z.object({
  ...statementBase,
  predicateType: z.literal(INTENT_PREDICATE_TYPE),
  predicate: intentPredicateSchema,
});
export type IntentStatement = z.output<typeof intentStatementSchema>;

export const workOrderStatementSchema = z.object({
  ...statementBase,
  predicateType: z.literal(WORK_ORDER_PREDICATE_TYPE),
  predicate: workOrderPredicateSchema,
});
export type WorkOrderStatement = z.output<typeof workOrderStatementSchema>;

/** The subject name of a stack's content (for humans and `cosign`; the digest is what is checked). */
export const stackSubjectName = (stackId: string) => `brokkr:stack/${stackId}`;

/** A deployment object's statement: its subject is the exact bytes the hub stores and serves. */
export function intentStatement(contentSha256: string, predicate: IntentPredicate): IntentStatement {
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: stackSubjectName(predicate.stack), digest: { sha256: contentSha256 } }],
    predicateType: INTENT_PREDICATE_TYPE,
    predicate,
  };
}

export function workOrderStatement(contentSha256: string, predicate: WorkOrderPredicate): WorkOrderStatement {
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: `brokkr:work-order/${predicate.workType}`, digest: { sha256: contentSha256 } }],
    predicateType: WORK_ORDER_PREDICATE_TYPE,
    predicate,
  };
}

// The hub reads the canonical inputs of a rendered object with this module alone (the render-inputs relay).
export { canonicalJson, helmReleaseName, renderInputDigests, renderInputsContent, renderInputsDocument } from './render-inputs.ts';
export type {
  ArchiveInputValues,
  RenderedKind,
  RenderInputDigest,
  RenderInputValues,
  RenderOptions,
  SignedLayerSet,
  TemplateInputValues,
  YamlInputValues,
} from './render-inputs.ts';

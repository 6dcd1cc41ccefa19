import { z } from 'zod';
import { deploymentObjectSchema } from './agent-api.ts';
import { signedLayerSchema } from './overrides.ts';
import { timestamp, uuid } from './wire.ts';

/**
 * Signed intent on the wire (docs/signatures.md). The hub stores what generators sign and what the
 * trust root's holders publish, and relays both to agents; it checks none of it (an agent with a
 * trust policy does, in its cluster). The signature itself is opaque here: a Sigstore bundle or a
 * DSSE envelope, as its signer wrote it.
 */
const signedJson = z
  .record(z.string(), z.unknown())
  .meta({ description: 'A Sigstore bundle (v0.3, a DSSE envelope inside) or a bare DSSE envelope' });

export const newSignatureSchema = z.object({ signature: signedJson }).meta({ id: 'NewSignature' });
export type NewSignature = z.input<typeof newSignatureSchema>;

/** What the hub read from a stored signature's statement (unverified: it is what the signer claims). */
export const storedSignatureSchema = z
  .object({
    id: z.string().meta({ description: 'The row id' }),
    stack_id: uuid().nullable(),
    work_type: z.string().nullable(),
    content_digest: z
      .string()
      .meta({ description: 'SHA-256 (hex) of the signed content: a deployment object with this yaml_checksum is relayed with it' }),
    version: z.number().int().nullable(),
    created_at: timestamp(),
  })
  .meta({ id: 'StoredSignature' });
export type StoredSignature = z.output<typeof storedSignatureSchema>;

/** GET /agents/{id}/signatures: for each object asked about, the newest signature stored for its content (none: left out). */
export const agentSignaturesSchema = z
  .object({
    deployment_objects: z.array(z.object({ deployment_object_id: uuid(), signature: signedJson })),
    work_orders: z.array(z.object({ work_order_id: uuid(), signature: signedJson })),
  })
  .meta({ id: 'AgentSignatures' });
export type AgentSignatures = z.output<typeof agentSignaturesSchema>;

export const TRUST_METADATA_KINDS = ['root', 'revocations', 'timestamp'] as const;
export type TrustMetadataKind = (typeof TRUST_METADATA_KINDS)[number];

const envelope = z.record(z.string(), z.unknown()).meta({ description: 'A DSSE envelope of a trust document' });

/** GET /trust-metadata: every root version (ascending), the newest revocation list and timestamp. */
export const trustMetadataSchema = z
  .object({ roots: z.array(envelope), revocations: envelope.nullable(), timestamp: envelope.nullable() })
  .meta({ id: 'TrustMetadata' });
export type TrustMetadata = z.output<typeof trustMetadataSchema>;

export const publishedTrustMetadataSchema = z
  .object({ kind: z.enum(TRUST_METADATA_KINDS), version: z.number().int() })
  .meta({ id: 'PublishedTrustMetadata' });

/**
 * A deployment object as an agent that checks signatures is served it (GET
 * /agents/{id}/target-state?signatures=true, the `target_state_patch` frame of an agent that asked
 * for `target-state-signatures`): with the newest signature stored for its content, when there is
 * one, so a change costs the agent no request for it. Every other agent is served the plain object.
 */
export const servedObjectSchema = deploymentObjectSchema
  .extend({
    signature: signedJson.optional().meta({
      description: 'The newest signature stored for this content (only when asked for with `signatures=true`, and when there is one)',
    }),
  })
  .meta({ id: 'ServedDeploymentObject' });
export type ServedDeploymentObject = z.output<typeof servedObjectSchema>;

/**
 * GET /agents/{id}/render-inputs/{deployment_object_id}: what a chart, an overlay, a template-made
 * object or plain YAML under override layers the agent is served is made from, for an agent that
 * makes it itself from signed inputs
 * (docs/signatures.md, "Charts and overlays"). Relayed, not trusted: the agent checks every digest.
 */
export const renderInputsSchema = z
  .object({
    deployment_object_id: uuid(),
    stack_id: uuid(),
    kind: z.enum(['helm', 'kustomize', 'template', 'yaml']),
    archive: z.string().meta({ description: 'The source archive (.tgz) exactly as the hub pinned it, base64 (a template: empty)' }),
    values: z.record(z.string(), z.unknown()).nullable().meta({ description: 'Helm: the values over the chart’s own' }),
    options: z
      .union([z.object({ release: z.object({ name: z.string(), namespace: z.string() }) }), z.object({ path: z.string() })])
      .nullable()
      .meta({ description: 'Helm: the release; kustomize: the overlay’s path; a template: null' }),
    template: z.object({ content: z.string(), parameters_schema: z.string(), parameters: z.unknown() }).nullable().optional().meta({
      description:
        'A deployment object instantiated from a template: the template version’s text and parameters schema, and the parameters',
    }),
    content: z
      .string()
      .optional()
      .meta({ description: 'Plain YAML in a stack with override layers: the YAML exactly as posted (the agent applies the layers)' }),
    capabilities: z.object({ kubeVersion: z.string(), apiVersions: z.array(z.string()) }),
    layers: z
      .array(signedLayerSchema)
      .optional()
      .meta({
        description:
          'Every override layer of the stack in its signed form and order (not only those selecting this agent): the agent ' +
          'selects from them by its own identity',
      }),
    not_signable: z
      .string()
      .nullable()
      .meta({
        description:
          'Why the hub’s render of it for this agent would be more than its inputs make: null (layers, agent references and ' +
          'the cluster’s facts are all resolved by the agent itself); an agent refuses an object whose inputs say otherwise',
      }),
    signature: signedJson.nullable().meta({ description: 'The newest signature stored for the stack whose statement names these inputs' }),
  })
  .meta({ id: 'RenderInputs' });
export type RenderInputs = z.output<typeof renderInputsSchema>;

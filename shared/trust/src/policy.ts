import { z } from 'zod';
import { envelopeSchema } from './dsse.ts';
import { readDocument, rootKeys, rootSchema, type Root } from './metadata.ts';

/**
 * An agent's trust policy, installed with it in its own cluster (the chart's `trustPolicy` value
 * becomes a Secret mounted as a file) and never read from the hub:
 *
 *   requireSignatures  true: nothing unsigned is applied, deleted or run (false: signatures are
 *                      checked when present, unsigned content is taken as before)
 *   root               the first trust root (a root document, or an envelope of one): the root
 *                      keys and threshold, the generators with their keys, keyless identities and
 *                      scopes, the timestamp signers. Later versions come through the hub, each
 *                      signed by the threshold of the one before.
 *   identity.labels    the labels a signed targeting may name this agent by, and override layers
 *                      select it by
 *   identity.annotations  the key/value pairs override layers select it by
 *   maxMetadataAge     the oldest a signed timestamp may be before the agent calls its metadata stale
 *   sigstore.trustedRoot  a Sigstore trusted_root.json, to check keyless signatures offline
 */
export const trustPolicySchema = z.object({
  requireSignatures: z.boolean().default(true),
  root: z.unknown(),
  identity: z
    .object({
      labels: z.array(z.string().min(1)).default([]),
      annotations: z.record(z.string().min(1), z.string()).default({}),
    })
    .default({ labels: [], annotations: {} }),
  maxMetadataAge: z
    .string()
    .regex(/^\d+(s|m|h|d)$/, 'a duration such as 30m, 24h or 7d')
    .default('24h'),
  sigstore: z.object({ trustedRoot: z.record(z.string(), z.unknown()) }).optional(),
});

export interface TrustPolicy {
  requireSignatures: boolean;
  root: Root;
  labels: string[];
  annotations: Record<string, string>;
  maxMetadataAgeMs: number;
  /** The Sigstore trusted root (JSON), when keyless signatures are to be checked. */
  sigstoreTrustedRoot: Record<string, unknown> | undefined;
}

export class TrustPolicyError extends Error {}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function durationMs(text: string): number {
  const unit = text.at(-1) as keyof typeof UNIT_MS;
  return Number(text.slice(0, -1)) * UNIT_MS[unit];
}

/** The policy from its parsed JSON or YAML; throws TrustPolicyError saying what is wrong. */
export function parseTrustPolicy(value: unknown): TrustPolicy {
  const parsed = trustPolicySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TrustPolicyError(
      `invalid trust policy: ${issue ? `${issue.path.join('.') || 'policy'}: ${issue.message}` : 'unexpected shape'}`,
    );
  }
  const p = parsed.data;
  return {
    requireSignatures: p.requireSignatures,
    root: installedRoot(p.root),
    labels: p.identity.labels,
    annotations: p.identity.annotations,
    maxMetadataAgeMs: durationMs(p.maxMetadataAge),
    sigstoreTrustedRoot: p.sigstore?.trustedRoot,
  };
}

/** The installed root is trusted as given (its installer is the cluster's admin); an envelope's signatures are not needed. */
function installedRoot(value: unknown): Root {
  try {
    const root = envelopeSchema.safeParse(value).success ? readDocument(value, rootSchema).document : rootSchema.parse(value);
    rootKeys(root);
    return root;
  } catch (err) {
    const detail = err instanceof z.ZodError ? (err.issues[0]?.message ?? 'unexpected shape') : (err as Error).message;
    throw new TrustPolicyError(`invalid trust policy: root: ${detail}`);
  }
}

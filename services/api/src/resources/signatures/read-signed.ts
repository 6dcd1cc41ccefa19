import { hash } from 'node:crypto';
import {
  intentStatementSchema,
  IN_TOTO_PAYLOAD_TYPE,
  REVOCATIONS_TYPE,
  ROOT_TYPE,
  TIMESTAMP_TYPE,
  TRUST_PAYLOAD_TYPE,
  workOrderStatementSchema,
} from '@brokkr/trust/statement';
import type { TrustMetadataKind } from '@brokkr/contracts';
import { z } from 'zod';

/**
 * What the hub reads from what it stores, to file it: never a check of a signature (the hub holds
 * no key and is not trusted to judge one; each agent does, in its cluster). A malformed one is
 * refused here only so that a signer's mistake shows at once instead of as every agent's refusal.
 */

const envelopeShape = z.object({ payloadType: z.string(), payload: z.string() });

/** The DSSE envelope of a Sigstore bundle (`dsseEnvelope`) or the envelope itself. */
function envelopeOf(signed: Record<string, unknown>): z.output<typeof envelopeShape> | undefined {
  const parsed = envelopeShape.safeParse('mediaType' in signed ? signed.dsseEnvelope : signed);
  return parsed.success ? parsed.data : undefined;
}

function payloadJson(payload: string): unknown {
  try {
    return JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}

export type ReadSignature =
  | { ok: true; subject: { stackId: string; version: number } | { workType: string }; contentDigest: string; bundleSha256: string }
  | { ok: false; reason: string };

/** The stack (or work type), version and content digest a signature's statement claims. */
export function readSignature(signed: Record<string, unknown>): ReadSignature {
  const envelope = envelopeOf(signed);
  if (!envelope) return { ok: false, reason: 'neither a Sigstore bundle with a DSSE envelope nor a DSSE envelope' };
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return { ok: false, reason: `payload type ${envelope.payloadType}, not ${IN_TOTO_PAYLOAD_TYPE}` };
  const json = payloadJson(envelope.payload);
  const bundleSha256 = hash('sha256', JSON.stringify(signed), 'hex');
  const intent = intentStatementSchema.safeParse(json);
  if (intent.success) {
    const { stack, version } = intent.data.predicate;
    return { ok: true, subject: { stackId: stack, version }, contentDigest: intent.data.subject[0]!.digest.sha256, bundleSha256 };
  }
  const order = workOrderStatementSchema.safeParse(json);
  if (order.success)
    return {
      ok: true,
      subject: { workType: order.data.predicate.workType },
      contentDigest: order.data.subject[0]!.digest.sha256,
      bundleSha256,
    };
  const issue = intent.error.issues[0];
  return {
    ok: false,
    reason: `not a Brokkr intent or work-order statement (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'unexpected shape'})`,
  };
}

const KINDS: Record<string, TrustMetadataKind> = { [ROOT_TYPE]: 'root', [REVOCATIONS_TYPE]: 'revocations', [TIMESTAMP_TYPE]: 'timestamp' };
const documentShape = z.object({ _type: z.string(), version: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

/** A trust document's kind and the version it claims. */
export function readTrustDocument(
  envelope: Record<string, unknown>,
): { ok: true; kind: TrustMetadataKind; version: number } | { ok: false; reason: string } {
  const parsed = z
    .object({ payloadType: z.literal(TRUST_PAYLOAD_TYPE), payload: z.string(), signatures: z.array(z.unknown()).min(1) })
    .safeParse(envelope);
  if (!parsed.success) return { ok: false, reason: `not a signed DSSE envelope of ${TRUST_PAYLOAD_TYPE}` };
  const document = documentShape.safeParse(payloadJson(parsed.data.payload));
  const kind = document.success ? KINDS[document.data._type] : undefined;
  if (!document.success || !kind)
    return { ok: false, reason: `the payload is no root, revocation list or timestamp of ${ROOT_TYPE.replace(/root\/v1$/, '…')}` };
  return { ok: true, kind, version: document.data.version };
}

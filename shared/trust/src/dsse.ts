import type { KeyObject } from 'node:crypto';
import { dsse } from '@sigstore/core';
import { z } from 'zod';
import { keyIdOf, signBytes, verifyBytes } from './keys.ts';

/**
 * A DSSE envelope (in its JSON form, as in-toto and cosign write it): the payload's bytes, their
 * type, and one or more signatures over the pre-authentication encoding PAE(type, payload). Several
 * signatures are how a threshold of root keys signs one document.
 */
export const envelopeSchema = z.object({
  payloadType: z.string().min(1),
  payload: z.string(),
  signatures: z.array(z.object({ keyid: z.string().optional(), sig: z.string().min(1) })).min(1),
});
export type Envelope = z.output<typeof envelopeSchema>;

export function payloadOf(envelope: Envelope): Buffer {
  return Buffer.from(envelope.payload, 'base64');
}

/** PAE(type, payload): the bytes every DSSE signature covers. */
export function preAuthEncoding(envelope: Pick<Envelope, 'payloadType' | 'payload'>): Buffer {
  return dsse.preAuthEncoding(envelope.payloadType, payloadOf(envelope as Envelope));
}

/** An envelope of `payload` signed by each key (their key ids named, so a verifier tries one key per signature). */
export function signEnvelope(payloadType: string, payload: Buffer, keys: KeyObject[]): Envelope {
  const unsigned = { payloadType, payload: payload.toString('base64') };
  const pae = preAuthEncoding(unsigned);
  return { ...unsigned, signatures: keys.map((key) => ({ keyid: keyIdOf(key), sig: signBytes(key, pae).toString('base64') })) };
}

/** Adds signatures to an envelope someone else signed already (a threshold gathered one holder at a time). */
export function countersign(envelope: Envelope, keys: KeyObject[]): Envelope {
  const pae = preAuthEncoding(envelope);
  const added = keys.map((key) => ({ keyid: keyIdOf(key), sig: signBytes(key, pae).toString('base64') }));
  const known = new Set(envelope.signatures.map((s) => s.keyid));
  return { ...envelope, signatures: [...envelope.signatures, ...added.filter((s) => !known.has(s.keyid))] };
}

/**
 * The key ids, among `keys`, whose signature on the envelope verifies. A signature naming a key id
 * is checked against that key only; one naming none (cosign's envelopes) against each key.
 */
export function verifiedKeyIds(envelope: Envelope, keys: ReadonlyMap<string, KeyObject>): Set<string> {
  const pae = preAuthEncoding(envelope);
  const verified = new Set<string>();
  for (const signature of envelope.signatures) {
    const sig = Buffer.from(signature.sig, 'base64');
    const candidates = signature.keyid && keys.has(signature.keyid) ? [signature.keyid] : signature.keyid ? [] : [...keys.keys()];
    const match = candidates.find((id) => !verified.has(id) && verifyBytes(keys.get(id)!, pae, sig));
    if (match) verified.add(match);
  }
  return verified;
}

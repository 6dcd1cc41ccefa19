import type { KeyObject } from 'node:crypto';
import { bundleFromJSON, bundleToJSON, toDSSEBundle, type Bundle, type SerializedBundle } from '@sigstore/bundle';
import { envelopeSchema, preAuthEncoding, type Envelope } from './dsse.ts';
import { keyIdOf, signBytes } from './keys.ts';
import { IN_TOTO_PAYLOAD_TYPE } from './statement.ts';

/**
 * What a generator hands the hub: a Sigstore bundle (v0.3, its content a DSSE envelope), as
 * sigstore-js, `cosign attest-blob --new-bundle-format` and `brokkr sign` write it, or a bare DSSE
 * envelope (`cosign attest-blob --key` without a bundle). Either way the DSSE envelope is what is
 * verified; a bundle may add the keyless signer's certificate and its transparency-log entry.
 */
export type SignedIntent =
  { form: 'bundle'; envelope: Envelope; bundle: Bundle; keyless: boolean } | { form: 'envelope'; envelope: Envelope; keyless: false };

export class SignatureFormatError extends Error {}

/** Reads what the hub relayed; throws SignatureFormatError when it is neither form. */
export function readSignedIntent(json: unknown): SignedIntent {
  if (json && typeof json === 'object' && 'mediaType' in json) return readBundle(json);
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) throw new SignatureFormatError('neither a Sigstore bundle nor a DSSE envelope');
  return { form: 'envelope', envelope: envelope.data, keyless: false };
}

function readBundle(json: object): SignedIntent {
  let bundle: Bundle;
  try {
    bundle = bundleFromJSON(json);
  } catch (err) {
    throw new SignatureFormatError(`not a valid Sigstore bundle: ${(err as Error).message}`);
  }
  if (bundle.content.$case !== 'dsseEnvelope') throw new SignatureFormatError('the bundle holds a message signature, not a DSSE envelope');
  const dsse = bundle.content.dsseEnvelope;
  const envelope: Envelope = {
    payloadType: dsse.payloadType,
    payload: dsse.payload.toString('base64'),
    signatures: dsse.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig.toString('base64') })),
  };
  const key = bundle.verificationMaterial.content.$case;
  return { form: 'bundle', envelope, bundle, keyless: key === 'certificate' || key === 'x509CertificateChain' };
}

/**
 * A keyed Sigstore bundle (v0.3) of an in-toto statement: the DSSE envelope signed by `key`, the
 * key named by its id as the bundle's public-key hint. No transparency-log entry: a keyed
 * signature is checked against the keys of the agent's trust policy, not a log. The envelope's
 * signature names no key id (as cosign's own attestations): cosign skips a signature whose key id
 * is not its own fingerprint of the key it was given, and the hint names the key already.
 */
export function signStatementBundle(statement: object, key: KeyObject): SerializedBundle {
  const artifact = Buffer.from(JSON.stringify(statement));
  const signature = signBytes(key, preAuthEncoding({ payloadType: IN_TOTO_PAYLOAD_TYPE, payload: artifact.toString('base64') }));
  const bundle = bundleToJSON(toDSSEBundle({ artifact, artifactType: IN_TOTO_PAYLOAD_TYPE, signature, keyHint: keyIdOf(key) }));
  for (const s of bundle.dsseEnvelope?.signatures ?? []) s.keyid = '';
  return bundle;
}

export type { SerializedBundle };

import type { KeyObject } from 'node:crypto';
import { toSignedEntity, Verifier, type TrustMaterial } from '@sigstore/verify';
import type { SignedIntent } from './bundle.ts';
import { verifiedKeyIds } from './dsse.ts';
import { rootKeys, type GeneratorDelegation, type KeylessIdentity, type Root } from './metadata.ts';

/** Who signed: the generator of the root, and its key id or its keyless identity. */
export type Signer = { generator: GeneratorDelegation; keyid: string } | { generator: GeneratorDelegation; identity: KeylessIdentity };

export class SignerError extends Error {}

/** Keyless bundles are checked like `cosign verify-blob-attestation`: one SCT, one transparency-log entry, a timestamp. */
const KEYLESS_THRESHOLDS = { ctlogThreshold: 1, tlogThreshold: 1, timestampThreshold: 1 };

/**
 * The signer of `intent` among what `generatorName` is delegated in `root`: a key of its whose
 * signature on the envelope verifies, or, for a keyless bundle, the Fulcio certificate that chains to
 * the Sigstore trust material (`keyless`), logged in Rekor, whose issuer and subject one of its keyless
 * identities names. Throws SignerError otherwise.
 */
export function identifySigner(intent: SignedIntent, root: Root, generatorName: string, keyless: TrustMaterial | undefined): Signer {
  const generator = root.generators.find((g) => g.name === generatorName);
  if (!generator) throw new SignerError(`generator "${generatorName}" is not in the trust root (v${root.version})`);
  if (intent.keyless) return keylessSigner(intent, generator, keyless);
  const all = rootKeys(root);
  const keys = new Map<string, KeyObject>(generator.keyids.flatMap((id) => (all.has(id) ? [[id, all.get(id)!] as const] : [])));
  const [keyid] = verifiedKeyIds(intent.envelope, keys);
  if (!keyid) throw new SignerError(`no key of generator "${generator.name}" made this signature`);
  return { generator, keyid };
}

function keylessSigner(intent: SignedIntent, generator: GeneratorDelegation, material: TrustMaterial | undefined): Signer {
  if (intent.form !== 'bundle') throw new SignerError('a keyless signature comes as a Sigstore bundle');
  if (!material) throw new SignerError('the trust policy has no Sigstore trusted root: keyless signatures cannot be checked');
  if (!generator.keyless.length) throw new SignerError(`generator "${generator.name}" has no keyless identity`);
  let found: { subjectAlternativeName?: string; extensions?: { issuer?: string } } | undefined;
  try {
    found = new Verifier(material, KEYLESS_THRESHOLDS).verify(toSignedEntity(intent.bundle)).identity;
  } catch (err) {
    throw new SignerError(`the keyless signature does not verify: ${(err as Error).message}`);
  }
  const subject = found?.subjectAlternativeName ?? '';
  const issuer = found?.extensions?.issuer ?? '';
  const identity = generator.keyless.find((k) => k.issuer === issuer && new RegExp(`^(?:${k.subject})$`).test(subject));
  if (!identity)
    throw new SignerError(`the certificate (issuer ${issuer}, subject ${subject}) matches no keyless identity of "${generator.name}"`);
  return { generator, identity: { issuer, subject } };
}

import { TrustedRoot } from '@sigstore/protobuf-specs';
import { toTrustMaterial, type TrustMaterial } from '@sigstore/verify';
import { keepCertificateEncodings } from './x509-encodings.ts';

/**
 * What keyless signatures are checked against: a Sigstore `trusted_root.json` (Fulcio's CA chain,
 * Rekor's and the CT log's keys, timestamp authorities), given with the trust policy. It is read from
 * the policy, never fetched, so an agent checks keyless signatures offline and in air-gapped
 * clusters; `cosign trusted-root create` or the public Sigstore TUF repository give the file.
 */
export function keylessTrustMaterial(trustedRootJson: unknown): TrustMaterial {
  keepCertificateEncodings();
  return toTrustMaterial(TrustedRoot.fromJSON(trustedRootJson));
}

export type { TrustMaterial };

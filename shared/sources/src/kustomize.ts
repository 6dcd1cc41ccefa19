import { assertGzip, sha256Digest } from './digest.ts';
import { SourceError } from './errors.ts';
import type { FetchedSource } from './fetched.ts';
import { statusError, type SourceHttp } from './http/client.ts';
import type { SourcePolicy } from './policy.ts';
import type { KustomizeSpec } from './spec.ts';

const WHAT = 'the kustomize archive';

function pinned(bytes: Buffer, path: string, url?: string): FetchedSource {
  assertGzip(bytes, WHAT);
  const digest = sha256Digest(bytes);
  return { kind: 'kustomize-archive', digest, bytes, pinned: { kustomize: { path, digest, ...(url ? { url } : {}) } } };
}

function tooLarge(maxBytes: number): SourceError {
  return new SourceError('source_too_large', `${WHAT} is larger than ${maxBytes} bytes`, { max_bytes: maxBytes });
}

/**
 * A kustomization's directory tree as a .tar.gz, given inline (base64) or by URL. The inline
 * text is measured before it is decoded, so an oversized one costs no second copy.
 */
export async function fetchKustomize(http: SourceHttp, spec: KustomizeSpec, policy: SourcePolicy): Promise<FetchedSource> {
  if ('archive' in spec) {
    if (spec.archive.length > Math.ceil(policy.maxBytes / 3) * 4) throw tooLarge(policy.maxBytes);
    const bytes = Buffer.from(spec.archive, 'base64');
    if (bytes.length > policy.maxBytes) throw tooLarge(policy.maxBytes);
    return pinned(bytes, spec.path);
  }
  const res = await http.get(new URL(spec.url), { what: WHAT, maxBytes: policy.maxBytes });
  if (res.status !== 200) throw statusError(res, WHAT, { url: spec.url });
  return pinned(res.bytes, spec.path, spec.url);
}

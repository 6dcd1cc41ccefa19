import { SourceError } from './errors.ts';
import type { FetchedSource } from './fetched.ts';
import { fetchFromChartRepository } from './helm/chart-repository.ts';
import { fetchFromOciRegistry } from './helm/oci.ts';
import { createSourceHttp } from './http/client.ts';
import { fetchKustomize } from './kustomize.ts';
import type { SourcePolicy } from './policy.ts';
import { sourceSpecSchema, type SourceSpec } from './spec.ts';

function validated(spec: SourceSpec): SourceSpec {
  const parsed = sourceSpecSchema.safeParse(spec);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `source.${issue.path.join('.')}: ` : '';
  throw new SourceError('invalid_source', `${where}${issue?.message ?? 'invalid source'}`);
}

/**
 * Fetches a chart or a kustomize archive once, under the policy: every URL (redirects, token
 * services and blob storage included) on the allowed hosts, at allowed addresses, within
 * maxBytes and timeoutMs. Rejects with SourceError only.
 */
export async function fetchSource(spec: SourceSpec, policy: SourcePolicy): Promise<FetchedSource> {
  const source = validated(spec);
  const http = createSourceHttp(policy);
  try {
    if ('kustomize' in source) return await fetchKustomize(http, source.kustomize, policy);
    return source.helm.repository.startsWith('oci://')
      ? await fetchFromOciRegistry(http, source.helm, policy)
      : await fetchFromChartRepository(http, source.helm, policy);
  } finally {
    await http.close();
  }
}

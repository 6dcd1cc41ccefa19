import type { Queryable } from '@brokkr/db';
import { fetchSource, SourceError, storeSourceBlob, type SourcePolicy, type SourceErrorCode, type SourceSpec } from '@brokkr/sources';
import { errorKind, type ErrorKind } from '../../errors/api-error.ts';
import { invalidDeploymentObject } from '../../errors/catalogue.ts';
import { unreadableReference } from '@brokkr/overrides';
import type { ObjectSource } from './rendered.ts';

/** One error kind per reason a source cannot be used, with the status @brokkr/sources gives it (source-errors.test checks they agree). */
export const sourceErrors: Record<SourceErrorCode, ErrorKind> = {
  invalid_source: errorKind(400, 'invalid_source', 'The source is not a chart or an archive the hub can use'),
  source_host_not_allowed: errorKind(422, 'source_host_not_allowed', "The source's host is not one this hub may fetch from"),
  source_address_not_allowed: errorKind(
    422,
    'source_address_not_allowed',
    "The source's address is private or reserved, and this hub may not reach it",
  ),
  source_not_found: errorKind(404, 'source_not_found', 'The source does not exist'),
  source_too_large: errorKind(413, 'source_too_large', 'The source is larger than this hub takes'),
  source_digest_mismatch: errorKind(422, 'source_digest_mismatch', 'The source does not match its digest'),
  source_unreachable: errorKind(502, 'source_unreachable', 'The source could not be fetched'),
};

/**
 * A chart or an overlay fetched once (outside any transaction: it is network I/O), kept in the
 * content-addressed store under its digest, and what the object records of it. Values that refer
 * to something no agent has are refused here, whatever the stack targets.
 */
export async function fetchObjectSource(
  db: Queryable,
  policy: SourcePolicy,
  source: { spec: SourceSpec; values: Record<string, unknown> },
): Promise<ObjectSource> {
  const unreadable = unreadableReference(source.values);
  if (unreadable) throw invalidDeploymentObject.with(`Invalid deployment object: values: ${unreadable}`);
  let fetched;
  try {
    fetched = await fetchSource(source.spec, policy);
  } catch (err) {
    if (err instanceof SourceError) throw sourceErrors[err.code].with(err.message, err.details);
    throw err;
  }
  await storeSourceBlob(db, fetched);
  if ('helm' in source.spec) return { kind: 'helm', digest: fetched.digest, pinned: fetched.pinned, values: source.values };
  return { kind: 'kustomize', digest: fetched.digest, pinned: fetched.pinned, path: source.spec.kustomize.path };
}

/**
 * @brokkr/sources: the charts and kustomize archives a deployment object is rendered from,
 * fetched once under the hub's outbound-address rules (docs/security.md, "Fetching charts and
 * overlays") and kept in a content-addressed store.
 */
export { sourceSpecSchema, MAX_INLINE_ARCHIVE_CHARS, type SourceSpec, type HelmSpec, type KustomizeSpec } from './spec.ts';
export type { FetchedSource } from './fetched.ts';
export { sourcePolicyFromConfig, hostAllowed, type SourcePolicy, type SourceConfig } from './policy.ts';
export { SourceError, SOURCE_ERROR_STATUS, type SourceErrorCode } from './errors.ts';
export { fetchSource } from './fetch-source.ts';
export { storeSourceBlob, loadSourceBlob, type SourceBlob } from './store.ts';
export { sha256Digest } from './digest.ts';
export { HELM_CHART_LAYER_MEDIA_TYPE, HELM_CONFIG_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from './helm/oci.ts';

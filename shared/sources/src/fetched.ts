/** A source fetched and pinned: what the content-addressed store keeps and the object records. */
export interface FetchedSource {
  kind: 'helm-chart' | 'kustomize-archive';
  /** `sha256:<hex>` of `bytes`: the store's key. */
  digest: string;
  /** The chart's .tgz or the kustomize .tar.gz, exactly as fetched or given. */
  bytes: Buffer;
  /**
   * What the deployment object records about its source: `{helm: {repository, chart, version,
   * digest, manifest_digest?}}` or `{kustomize: {path, digest, url?}}` (snake_case, as on the wire).
   */
  pinned: Record<string, unknown>;
}

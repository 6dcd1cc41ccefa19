import { BrokkrError } from '@brokkr/errors';

/**
 * Why a source could not be fetched, each with the HTTP status the api answers it with. The
 * tenant named the source, so every one of these is the tenant's to fix (4xx), except a remote
 * that could not be reached or answered an error (502): the hub did nothing wrong either.
 */
export const SOURCE_ERROR_STATUS = {
  /** The spec is malformed, or what was fetched is not what it claims (no chart layer, bad index). */
  invalid_source: 400,
  /** The URL's host is not on BROKKR__BROKER__SOURCE_ALLOWED_HOSTS. */
  source_host_not_allowed: 422,
  /** The host is, or resolves to, a private or reserved address (or plain HTTP to a public one). */
  source_address_not_allowed: 422,
  /** The repository, chart, version, manifest or blob does not exist. */
  source_not_found: 404,
  /** Larger than BROKKR__BROKER__SOURCE_MAX_BYTES (or a fixed cap for manifests and tokens). */
  source_too_large: 413,
  /** The bytes do not match the digest the index or the manifest gives for them. */
  source_digest_mismatch: 422,
  /** Connection refused, DNS failure, TLS failure, timeout, a 5xx or too many redirects. */
  source_unreachable: 502,
} as const;

export type SourceErrorCode = keyof typeof SOURCE_ERROR_STATUS;

/** A source that cannot be used; `code` is the wire error code, `details` safe to show the tenant. */
export class SourceError extends BrokkrError {
  constructor(
    readonly code: SourceErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The status the api answers with (SOURCE_ERROR_STATUS). */
  get status(): number {
    return SOURCE_ERROR_STATUS[this.code];
  }
}

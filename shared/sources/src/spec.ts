import { z } from 'zod';

/** Where a deployment object's content comes from, as the tenant submits it. */
export type SourceSpec =
  | { helm: { repository: string; chart: string; version: string } }
  | { kustomize: { archive: string; path: string } | { url: string; path: string } };

export type HelmSpec = Extract<SourceSpec, { helm: unknown }>['helm'];
export type KustomizeSpec = Extract<SourceSpec, { kustomize: unknown }>['kustomize'];

/** The largest inline archive the schema lets through; the policy's maxBytes is checked later. */
export const MAX_INLINE_ARCHIVE_CHARS = Math.ceil((64 * 1024 * 1024) / 3) * 4;

const MAX_URL_CHARS = 2048;

/**
 * A URL without credentials, query or fragment: nothing secret ends up in what the object
 * records, and a repository URL is a plain base the chart's path is appended to.
 */
function plainUrl(schemes: readonly string[]) {
  return z
    .string()
    .max(MAX_URL_CHARS)
    .refine(
      (value) => {
        const url = URL.parse(value);
        return (
          url !== null &&
          schemes.includes(url.protocol) &&
          url.hostname !== '' &&
          !url.username &&
          !url.password &&
          !url.search &&
          !url.hash
        );
      },
      `must be a ${schemes.map((s) => `${s}//`).join(' or ')} URL without credentials, query or fragment`,
    );
}

/**
 * Helm's chart names and versions are also path segments here (OCI: `<repo>/<chart>:<version>`),
 * so no `/`, no leading dot and nothing outside [A-Za-z0-9._+-].
 */
const chartName = z
  .string()
  .max(250)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be a chart name (letters, digits, ".", "_", "-")');
const chartVersion = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9.+_-]*$/, 'must be a chart version (e.g. 1.2.3)');

/** A directory inside the archive: relative, `/`-separated, no `..`, nothing hidden the renderer would treat as special. */
const archivePath = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (value) => value === '.' || value.split('/').every((part) => part !== '' && part !== '..' && !/[\\\0]/.test(part)),
    'must be a relative path inside the archive ("." for its root), without ".." or empty segments',
  );

const base64 = z
  .string()
  .min(1)
  .max(MAX_INLINE_ARCHIVE_CHARS)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64 (a .tar.gz)');

const helm = z.strictObject({
  repository: plainUrl(['https:', 'http:', 'oci:']),
  chart: chartName,
  version: chartVersion,
});

const kustomize = z.union([
  z.strictObject({ archive: base64, path: archivePath }),
  z.strictObject({ url: plainUrl(['https:', 'http:']), path: archivePath }),
]);

export const sourceSpecSchema: z.ZodType<SourceSpec> = z.union([z.strictObject({ helm }), z.strictObject({ kustomize })]);

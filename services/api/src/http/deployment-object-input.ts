import { errorKind } from '../errors/api-error.ts';
import { decodeUtf8, isYamlContentType, YamlValidatorBusy, type YamlValidator } from '../yaml/index.ts';
import type { SourceSpec } from '@brokkr/sources';
import type { RawBody } from './body.ts';
import { newDeploymentObjectSchema } from './deployment-object-schemas.ts';

export interface DeploymentObjectInput {
  /** '' for a source: its YAML is rendered per agent. */
  yamlContent: string;
  isDeletionMarker: boolean;
  /** A chart or an overlay to fetch, with the chart's values. */
  source?: { spec: SourceSpec; values: Record<string, unknown> };
}

/** `details` (`{limit, value}`) when the content was refused for its size or shape (YAML limits). */
export type InputResult = { ok: true; input: DeploymentObjectInput } | { ok: false; reason: string; details?: Record<string, unknown> };

const rejected = (reason: string): InputResult => ({ ok: false, reason });

/**
 * The body of POST /stacks/{id}/deployment-objects, and of POST /stacks/{id}/previews, which
 * proposes the same content. Brokkr reads the body itself: a YAML content type means the body IS the YAML (and the
 * `deletion_marker` query sets the flag); anything else, including no content type, is parsed
 * as the JSON envelope. Every problem with the body is a 400 `invalid_deployment_object`.
 * The YAML is checked on the validator's worker threads, never on the event loop, in the share of
 * the validator's queue that belongs to `tenant` (auth/identity.ts tenantOf).
 */
export async function readDeploymentObjectInput(
  raw: RawBody | undefined,
  deletionMarkerQuery: boolean | undefined,
  yaml: Pick<YamlValidator, 'validate'>,
  tenant: string,
): Promise<InputResult> {
  if (!raw) return rejected('missing body');
  const text = decodeUtf8(raw.bytes);
  if (text === undefined) return rejected('the request body is not valid UTF-8');
  const parsed = isYamlContentType(raw.contentType)
    ? ({ ok: true, input: { yamlContent: text, isDeletionMarker: deletionMarkerQuery ?? false } } as const)
    : parseJsonEnvelope(text);
  if (!parsed.ok || 'source' in parsed.input) return parsed;
  const verdict = await yaml
    .validate(parsed.input.yamlContent, { isDeletionMarker: parsed.input.isDeletionMarker }, tenant)
    .catch(busyToApiError);
  if (verdict.ok) return parsed;
  const { reason, limit } = verdict;
  return limit ? { ok: false, reason, details: { limit: limit.limit, value: limit.value } } : rejected(reason);
}

// Every worker busy and the tenant's share of the queue (or the whole queue) full: the content may be fine, retry later.
export const yamlValidatorBusy = errorKind(503, 'yaml_validator_busy', 'Too many deployment objects are being validated; retry later');

function busyToApiError(err: unknown): never {
  if (err instanceof YamlValidatorBusy) throw yamlValidatorBusy();
  throw err;
}

function parseJsonEnvelope(text: string): InputResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return rejected(`invalid JSON body: ${err instanceof Error ? err.message : String(err)}`);
  }
  const result = newDeploymentObjectSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    return rejected(`invalid JSON body: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unexpected shape'}`);
  }
  const { yaml_content: yamlContent, is_deletion_marker: marker, source, values } = result.data;
  if (source) return { ok: true, input: { yamlContent: '', isDeletionMarker: false, source: { spec: source, values: values ?? {} } } };
  return { ok: true, input: { yamlContent: yamlContent ?? '', isDeletionMarker: marker ?? false } };
}

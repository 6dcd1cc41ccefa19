import { decodeUtf8, isYamlContentType, validateDeploymentYaml } from '../yaml/index.ts';
import type { RawBody } from '../http/body.ts';
import { newDeploymentObjectSchema } from './deployment-objects-schemas.ts';

export interface DeploymentObjectInput {
  yamlContent: string;
  isDeletionMarker: boolean;
}

export type InputResult = { ok: true; input: DeploymentObjectInput } | { ok: false; reason: string };

const rejected = (reason: string): InputResult => ({ ok: false, reason });

/**
 * Brokkr reads the body itself: a YAML content type means the body IS the YAML (and the
 * `deletion_marker` query sets the flag); anything else, including no content type, is parsed
 * as the JSON envelope. Every problem with the body is a 400 `invalid_deployment_object`.
 */
export function readDeploymentObjectInput(raw: RawBody, deletionMarkerQuery: boolean | undefined): InputResult {
  const text = decodeUtf8(raw.bytes);
  if (text === undefined) return rejected('the request body is not valid UTF-8');
  const parsed = isYamlContentType(raw.contentType)
    ? ({ ok: true, input: { yamlContent: text, isDeletionMarker: deletionMarkerQuery ?? false } } as const)
    : parseJsonEnvelope(text);
  if (!parsed.ok) return parsed;
  const verdict = validateDeploymentYaml(parsed.input.yamlContent, { isDeletionMarker: parsed.input.isDeletionMarker });
  return verdict.ok ? parsed : rejected(verdict.reason);
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
  return { ok: true, input: { yamlContent: result.data.yaml_content, isDeletionMarker: result.data.is_deletion_marker ?? false } };
}

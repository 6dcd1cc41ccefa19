/** The content types Brokkr treats as YAML, on requests (Content-Type) and responses (Accept). */
export const YAML_MEDIA_TYPES = ['application/yaml', 'text/yaml', 'application/x-yaml'] as const;

/** True when the Content-Type's media type (parameters such as charset ignored) is a YAML one. */
export function isYamlContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return (YAML_MEDIA_TYPES as readonly string[]).includes(mediaType);
}

/**
 * Brokkr checks whether the Accept header merely contains a YAML media type (no q-values, no
 * ordering), so `Accept: application/json, application/yaml` gets YAML. Kept as is.
 */
export function acceptsYaml(header: string | undefined): boolean {
  if (header === undefined) return false;
  const lower = header.toLowerCase();
  return YAML_MEDIA_TYPES.some((type) => lower.includes(type));
}

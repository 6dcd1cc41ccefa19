import type { RenderSource } from './plan.ts';
import type { RenderableObject } from './sql/latest-object.ts';

/** A Helm release name from the stack's name: lower case, `[a-z0-9-]`, at most 53 characters (Helm's limit). */
export const releaseName = (stack: string) =>
  stack
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 53) || 'release';

/** What a stored object renders from (its recorded source, or its own YAML). */
export function renderSourceOfStored(object: RenderableObject): RenderSource {
  const spec = object.source as { helm?: { digest: string }; kustomize?: { digest: string; path: string } } | null;
  if (spec?.helm) {
    return {
      kind: 'helm',
      digest: spec.helm.digest,
      values: object.source_values ?? {},
      release: { name: releaseName(object.stack_name), namespace: 'default' },
    };
  }
  if (spec?.kustomize) return { kind: 'kustomize', digest: spec.kustomize.digest, path: spec.kustomize.path };
  return { kind: 'yaml', yaml: object.yaml_content, checksum: object.yaml_checksum };
}

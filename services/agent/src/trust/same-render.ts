import { parseAllDocuments } from 'yaml';
import { canonicalJson } from '@brokkr/trust';

/** The documents of a render as canonical JSON, or undefined when it is not YAML. */
function documentsOf(yaml: string): string | undefined {
  const docs = parseAllDocuments(yaml, { uniqueKeys: true });
  if (docs.some((d) => d.errors.length)) return undefined;
  return canonicalJson(docs.map((d) => d.toJS({ maxAliasCount: 0 }) as unknown).filter((v) => v !== null && v !== undefined));
}

/**
 * Whether the hub's render is the agent's own: the same bytes, or else the same documents (keys in
 * another order or other quoting are the same objects to apply; a hub of another release may write
 * YAML differently). Anything else, even one field, is another render.
 */
export function sameRender(own: string, served: string): boolean {
  if (own === served) return true;
  try {
    const [a, b] = [documentsOf(own), documentsOf(served)];
    return a !== undefined && a === b;
  } catch {
    return false;
  }
}

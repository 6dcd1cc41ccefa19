import { parseAllDocuments } from 'yaml';

/**
 * Aliases are legitimate in manifests but rare; expanding them is where "billion laughs" bombs
 * blow up. The `yaml` package counts, per alias, (uses so far × nodes behind the anchor) and
 * throws past this limit, so a handful of plain anchors pass while exponential nesting fails
 * after a few hundred nodes instead of gigabytes.
 */
export const MAX_ALIAS_COUNT = 100;

export type YamlVerdict = { ok: true } | { ok: false; reason: string };

// In a `u` regex a proper surrogate pair is one code point, so only unpaired halves match.
const LONE_SURROGATE = /\p{Cs}/u;

const invalid = (reason: string): YamlVerdict => ({ ok: false, reason });

export interface ValidateOptions {
  /** A deletion marker may be blank; any content it carries must still be valid YAML. */
  isDeletionMarker: boolean;
}

/**
 * Brokkr's rules for a deployment object's content: not blank (unless a marker), parses as a
 * YAML stream, and holds at least one non-null document. Text Postgres cannot store (NUL) and
 * strings that are not well-formed UTF-16 (lone surrogates from a JSON body) are refused too,
 * so the stored bytes are always exactly the submitted ones.
 */
export function validateDeploymentYaml(content: string, options: ValidateOptions): YamlVerdict {
  if (content.includes('\u0000')) return invalid('content contains a NUL character');
  if (LONE_SURROGATE.test(content)) return invalid('content is not valid Unicode');
  if (content.trim() === '') {
    return options.isDeletionMarker ? { ok: true } : invalid('YAML content must not be blank');
  }
  return parseStream(content);
}

function parseStream(content: string): YamlVerdict {
  try {
    const docs = parseAllDocuments(content, { prettyErrors: false });
    if (!Array.isArray(docs)) return invalid('YAML contains no document');
    let hasContent = false;
    for (const doc of docs) {
      const error = doc.errors[0];
      if (error) return invalid(`invalid YAML: ${error.message}`);
      // Every document is resolved (not only until one is non-null) so that an alias bomb in a
      // later document is rejected as well.
      if (doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) !== null) hasContent = true;
    }
    return hasContent ? { ok: true } : invalid('YAML contains no non-null document');
  } catch (err) {
    // Excessive or unresolved aliases throw from toJS; treat anything thrown as bad input.
    return invalid(`invalid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
}

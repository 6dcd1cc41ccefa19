import jsonPatch from 'fast-json-patch';
import { parseAllDocuments, stringify } from 'yaml';
import type { LayerPatch } from './layers.ts';

type Json = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7386: objects merge member by member, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Json = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export class PatchFailed extends Error {
  override name = 'PatchFailed';
}

const matches = (doc: Json, target: LayerPatch['target']) => {
  const meta = isPlainObject(doc.metadata) ? doc.metadata : {};
  return (
    doc.kind === target.kind &&
    meta.name === target.name &&
    (target.namespace === undefined || meta.namespace === target.namespace) &&
    (target.apiVersion === undefined || doc.apiVersion === target.apiVersion)
  );
};

function applyOne(doc: Json, patch: LayerPatch): Json {
  let out: unknown = doc;
  if (patch.merge_patch) out = mergePatch(out, patch.merge_patch);
  if (patch.json_patch) {
    try {
      out = jsonPatch.applyPatch(structuredClone(out), patch.json_patch as jsonPatch.Operation[], true, false).newDocument;
    } catch (err) {
      throw new PatchFailed(`JSON patch on ${patch.target.kind} '${patch.target.name}' failed: ${(err as Error).message}`);
    }
  }
  if (!isPlainObject(out))
    throw new PatchFailed(`a patch turned ${patch.target.kind} '${patch.target.name}' into something that is not an object`);
  return out;
}

/**
 * The rendered YAML with the patches applied, in order, to the documents each targets. A patch
 * whose target is not in the render fails (a typo must not silently change nothing). Without
 * patches the YAML is returned as it is, byte for byte.
 */
export function applyPatches(yaml: string, patches: readonly LayerPatch[]): string {
  if (patches.length === 0) return yaml;
  const docs = parseAllDocuments(yaml).flatMap((d) => {
    if (d.errors.length) throw new PatchFailed(`the render is not YAML: ${d.errors[0]!.message}`);
    const value: unknown = d.toJS({ maxAliasCount: 100 });
    return value === null || value === undefined ? [] : [value as Json];
  });
  for (const patch of patches) {
    const at = docs.findIndex((doc) => matches(doc, patch.target));
    if (at < 0) throw new PatchFailed(`no ${patch.target.kind} '${patch.target.name}' in the render to patch`);
    docs[at] = applyOne(docs[at]!, patch);
  }
  return docs.map((doc) => stringify(doc)).join('---\n');
}

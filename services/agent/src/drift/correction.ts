import type { KubeObject } from '../manifest/parse.ts';
import type { RawDrift } from './compare.ts';
import { isObject } from './pointer.ts';

/**
 * What a correction applies: the stamped manifest without the fields an ignore rule covers where
 * another manager holds them now (an HPA's /spec/replicas), so the correction does not take them
 * back. Only map paths are left out: a list item's index in the live object need not be its index
 * in the manifest, so an ignored field inside a list is applied as the manifest says.
 */
export function correctionOf(manifest: KubeObject, ignored: readonly RawDrift[]): KubeObject {
  const held = ignored.filter((d) => d.owner.manager !== null && !d.tokens.some((t) => /^\d+$/.test(t)));
  if (!held.length) return manifest;
  const copy = structuredClone(manifest);
  for (const d of held) removeAt(copy, d.tokens);
  return copy;
}

function removeAt(root: unknown, tokens: readonly string[]): void {
  let node = root;
  for (const token of tokens.slice(0, -1)) {
    if (!isObject(node)) return;
    node = node[token];
  }
  if (isObject(node)) delete node[tokens[tokens.length - 1]!];
}

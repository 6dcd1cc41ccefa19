import { isAlias, isCollection, isMap, isPair, isScalar, type Alias, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { exceeded, type YamlLimits } from './limits.ts';

/** A rule of the content broken (duplicate key, bad alias): the message is the verdict's reason. */
export class YamlContentError extends Error {
  override name = 'YamlContentError';
}

/** Running totals over the documents of one stream. */
export interface StreamTally {
  nodes: number;
  anchors: number;
  aliases: number;
  /** Nodes with every alias counted as the subtree it names. */
  expanded: number;
}

export const newTally = (): StreamTally => ({ nodes: 0, anchors: 0, aliases: 0, expanded: 0 });

// Stands for an empty key (`? ` alone) in the duplicate-key set, which yaml also compares equal.
const EMPTY_KEY = Symbol('empty key');

/**
 * One walk over a composed document, in document order, doing what yaml's `toJS()` does for us
 * (duplicate keys, alias resolution, the alias-bomb bound) in linear time. yaml's own versions
 * are quadratic: each key is compared with every earlier key of its map, and each alias scans the
 * document's anchors from the start, so 32,000 anchors each used once took 40 s.
 *
 * An alias names the latest node with that anchor before it; its expanded size is that node's,
 * remembered when the node was finished, so nothing is walked twice. A node that is not finished
 * yet is an ancestor of the alias: a recursive structure, refused.
 */
class DocumentWalker {
  private readonly anchors = new Map<string, object>();
  private readonly sizes = new WeakMap<object, number>();

  constructor(
    private readonly limits: YamlLimits,
    private readonly tally: StreamTally,
  ) {}

  size(node: unknown): number {
    if (node === null || node === undefined) return 0; // an empty key or value of a pair
    if (isAlias(node)) return this.aliasSize(node);
    if (!isScalar(node) && !isCollection(node)) return 0; // nothing else is composed from text
    this.count();
    const anchor = node.anchor;
    if (anchor) this.defineAnchor(anchor, node);
    const total = isCollection(node) ? 1 + this.itemsSize(node) : 1;
    if (anchor) this.sizes.set(node, total);
    return total;
  }

  private count(): void {
    this.tally.nodes += 1;
    if (this.tally.nodes > this.limits.maxNodes) throw exceeded(this.limits, 'maxNodes');
    this.grow(1);
  }

  private grow(by: number): void {
    this.tally.expanded += by;
    if (this.tally.expanded > this.limits.maxExpandedNodes) throw exceeded(this.limits, 'maxExpandedNodes');
  }

  private defineAnchor(name: string, node: object): void {
    this.tally.anchors += 1;
    if (this.tally.anchors > this.limits.maxAnchors) throw exceeded(this.limits, 'maxAnchors');
    this.anchors.set(name, node);
  }

  private aliasSize(alias: Alias): number {
    this.tally.aliases += 1;
    if (this.tally.aliases > this.limits.maxAliases) throw exceeded(this.limits, 'maxAliases');
    const target = this.anchors.get(alias.source);
    if (target === undefined) throw new YamlContentError(`Unresolved alias (the anchor must be set before the alias): ${alias.source}`);
    const size = this.sizes.get(target);
    if (size === undefined) throw new YamlContentError(`Alias refers to a node that contains it: ${alias.source}`);
    this.grow(size);
    return size;
  }

  private itemsSize(collection: YAMLMap | YAMLSeq): number {
    const keys = isMap(collection) ? new Set<unknown>() : undefined;
    let total = 0;
    for (const item of collection.items) {
      if (isPair(item)) {
        if (keys) requireUniqueKey(keys, item.key);
        total += this.size(item.key) + this.size(item.value);
      } else {
        total += this.size(item);
      }
    }
    return total;
  }
}

/**
 * yaml's rule (`uniqueKeys`): two keys are the same when both are scalars with the same value
 * (so `1` and `"1"` differ, `~` and `null` do not). Other keys never collide.
 */
function requireUniqueKey(seen: Set<unknown>, key: unknown): void {
  let value: unknown;
  if (key === null || key === undefined) value = EMPTY_KEY;
  else if (isScalar(key)) value = key.value;
  else return;
  if (Number.isNaN(value)) return; // NaN !== NaN in yaml's comparison
  if (seen.has(value)) throw new YamlContentError('Map keys must be unique');
  seen.add(value);
}

/** Checks one document (already free of parse errors) and adds it to the stream's tally. */
export function analyzeDocument(doc: Document.Parsed, limits: YamlLimits, tally: StreamTally): void {
  new DocumentWalker(limits, tally).size(doc.contents);
}

/** A document whose value is null: empty, or a null scalar (`~`, `null`, nothing after `---`). */
export function isNullDocument(doc: Document.Parsed): boolean {
  const contents = doc.contents;
  return contents === null || (isScalar(contents) && contents.value === null);
}

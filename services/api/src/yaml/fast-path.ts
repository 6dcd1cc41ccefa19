import type { YamlLimits } from './limits.ts';

/**
 * A fast path for the YAML most deployment objects are: block mappings and sequences of one-line
 * scalars, as `kubectl`, Helm and kustomize write them. It reads the content line by line (a few
 * µs for a small manifest; composing it with the `yaml` library costs ~170 µs) and answers only
 * "valid" — the full validator (validate.ts) would answer `{ ok: true }` too — or "don't know",
 * never "invalid", so every refusal and its message comes from the parser path. The subset, per
 * line: blank, comment, `---` / `...`, `key: value`, `key:` (then a nested block, or null),
 * `- value`, `- key: value`; values are safe plain scalars, quoted scalars closed on their line,
 * `{}` and `[]`. Anything else is declined. ADR 0025 has the details and the safety argument (the
 * differential test, test/yaml-fast-path.unit.test.ts). The caller has refused NUL and lone surrogates.
 */
export function fastPathProvesValid(content: string, limits: YamlLimits): boolean {
  if (UNUSUAL_CHARACTER.test(content)) return false;
  const reader = new BlockReader(content, limits);
  for (let start = 0; start <= content.length;) {
    let end = content.indexOf('\n', start);
    if (end < 0) end = content.length;
    if (!reader.read(start, end)) return false;
    start = end + 1;
  }
  return reader.provedValid();
}

// C0 controls other than LF (tab and CR included), DEL, C1 controls (NEL), the Unicode line and
// paragraph separators, the BOM and the two non-characters: the full validator decides those.
// eslint-disable-next-line no-control-regex
const UNUSUAL_CHARACTER = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;

// Plain keys the core schema resolves to null, a boolean or a float (keys starting with a digit
// or a sign are declined outright): they would not compare as the strings we keep in `keys`.
const NON_STRING_KEYS = new Set('null Null NULL true True TRUE false False FALSE .inf .Inf .INF .nan .NaN .NAN'.split(' '));
const LONGEST_NON_STRING_KEY = 5;

// yaml refuses an implicit key whose `:` is more than 1024 characters after the key's start.
const MAX_KEY_CHARS = 1000;
// The composer recurses per nesting level and runs out of stack around 1,000 levels.
const MAX_DEPTH = 64;

// Characters that cannot start a plain scalar (a `-` can, when a non-space follows it).
const INDICATORS = new Set('-?:,[]{}#&*!|>\'"%@`');
const [SPACE, COLON, HASH, DASH] = [0x20, 0x3a, 0x23, 0x2d]; // ' ', ':', '#', '-'

/** One open block collection: a mapping (with the keys seen so far) or a sequence. */
interface Collection {
  indent: number;
  keys: Set<string> | undefined; // undefined for a sequence
  /** A sequence written at its key's own indentation (`key:\n- a`): the next key line closes it. */
  atKeyIndent: boolean;
}

/** A node on one line: a key (a `:` follows), the index after that `:`, the key's string. */
interface Node {
  isKey: boolean;
  afterColon: number;
  /** As the core schema reads it; undefined when it is not certainly that string. */
  key: string | undefined;
}

const SCALAR: Node = Object.freeze({ isKey: false, afterColon: -1, key: undefined });

class BlockReader {
  private readonly line: Line;
  private stack: Collection[] = [];
  /** The last key line was `key:`: the next, deeper lines may be its value. */
  private pendingKey = false;
  /** After `...`: only comments, blank lines or `---` may follow. */
  private ended = false;
  /** Upper bounds of what the full validator counts (documents, nodes) across the stream. */
  private documents = 1;
  private nodes = 0;
  private hasContent = false;

  constructor(
    content: string,
    private readonly limits: YamlLimits,
  ) {
    this.line = new Line(content);
  }

  provedValid(): boolean {
    const maxNodes = Math.min(this.limits.maxNodes, this.limits.maxExpandedNodes);
    return this.hasContent && this.documents <= this.limits.maxDocuments && this.nodes + this.documents <= maxNodes;
  }

  /** Reads the line from `start` to `end`; false when it is outside the subset. */
  read(start: number, end: number): boolean {
    const line = this.line;
    line.start = start;
    line.end = end;
    const p = line.skipSpaces(start);
    if (p === end || line.at(p) === HASH) return true; // blank or comment
    if (p === start && (line.s.startsWith('---', p) || line.s.startsWith('...', p))) return this.marker(p);
    if (this.ended) return false;
    const isItem = line.isDash(p);
    const collection = this.enter(p - start, isItem);
    if (!collection) return false;
    return isItem ? this.item(p) : this.entry(collection, p);
  }

  /** `---` starts a document, `...` ends one; either closes every open collection. */
  private marker(p: number): boolean {
    if (!this.line.isRestEmpty(p + 3)) return false;
    this.stack = [];
    this.pendingKey = false;
    this.ended = this.line.at(p) !== DASH;
    this.documents += 1;
    return this.documents <= this.limits.maxDocuments;
  }

  /** The collection a line at `indent` belongs to, opening one where the line starts it. */
  private enter(indent: number, isItem: boolean): Collection | undefined {
    const top = this.stack.at(-1);
    if (!top) return indent === 0 ? this.open(indent, isItem, false) : undefined;
    if (this.pendingKey) {
      this.pendingKey = false;
      // The pending key's value: a deeper block, or a sequence at the key's own indentation.
      if (indent > top.indent || (indent === top.indent && isItem)) return this.open(indent, isItem, indent === top.indent);
      // Otherwise that value is null and the line continues an open collection.
    }
    return this.continued(indent, isItem);
  }

  /** The open collection a line at `indent` continues, closing the deeper ones. */
  private continued(indent: number, isItem: boolean): Collection | undefined {
    let current = this.stack.at(-1);
    while (current && current.indent > indent) {
      this.stack.pop();
      current = this.stack.at(-1);
    }
    if (current?.atKeyIndent && !isItem && current.indent === indent) {
      this.stack.pop();
      current = this.stack.at(-1);
    }
    if (!current || current.indent !== indent) return undefined;
    return (current.keys === undefined) === isItem ? current : undefined;
  }

  private open(indent: number, isSequence: boolean, atKeyIndent: boolean): Collection | undefined {
    if (this.stack.length >= MAX_DEPTH) return undefined;
    const collection: Collection = { indent, keys: isSequence ? undefined : new Set(), atKeyIndent };
    this.stack.push(collection);
    this.nodes += 1;
    this.hasContent = true;
    return collection;
  }

  /** `- value` or `- key: value` (a mapping that starts on the item's line). */
  private item(dash: number): boolean {
    const line = this.line;
    const p = line.skipSpaces(dash + 1);
    // An empty item, a comment after the dash, a nested `- - a`: left to the parser.
    if (p === line.end || line.at(p) === HASH || line.isDash(p)) return false;
    const node = line.node(p);
    if (!node) return false;
    if (!node.isKey) {
      this.nodes += 1;
      return true;
    }
    const mapping = this.open(p - line.start, false, false);
    return mapping !== undefined && this.pair(mapping, node);
  }

  /** `key: value` or `key:` in `mapping`. */
  private entry(mapping: Collection, p: number): boolean {
    const node = this.line.node(p);
    return node?.isKey === true && this.pair(mapping, node);
  }

  private pair(mapping: Collection, node: Node): boolean {
    // A duplicate, or a key that might equal another in a way not modelled here: the parser decides.
    if (node.key === undefined || mapping.keys === undefined || mapping.keys.has(node.key)) return false;
    mapping.keys.add(node.key);
    this.nodes += 2; // the key, and its value (a scalar, null, or the nested collection's own count)
    const line = this.line;
    const p = line.skipSpaces(node.afterColon);
    if (p === line.end || line.at(p) === HASH) {
      this.pendingKey = true;
      return true;
    }
    return line.node(p)?.isKey === false;
  }
}

/** The line being read (`s` from `start` to `end`, the newline excluded), and how to read its nodes. */
class Line {
  start = 0;
  end = 0;
  constructor(readonly s: string) {}

  at(p: number): number {
    return this.s.charCodeAt(p);
  }
  skipSpaces(p: number): number {
    while (p < this.end && this.s.charCodeAt(p) === SPACE) p++;
    return p;
  }

  /** True when only spaces, or spaces and then a comment, remain from `p`. */
  isRestEmpty(p: number): boolean {
    const q = this.skipSpaces(p);
    return q === this.end || (q > p && this.at(q) === HASH);
  }

  /** A `:` at `p` that separates a key from its value (a space or the end of the line follows). */
  isSeparator(p: number): boolean {
    return this.at(p) === COLON && (p + 1 === this.end || this.at(p + 1) === SPACE);
  }

  /** A `-` at `p` that starts a sequence item. */
  isDash(p: number): boolean {
    return this.at(p) === DASH && (p + 1 === this.end || this.at(p + 1) === SPACE);
  }

  /** The node starting at `p` (before `end`): a scalar, `{}` or `[]`; undefined when outside the subset. */
  node(p: number): Node | undefined {
    const first = this.s[p] as string;
    if (first === '"' || first === "'") return this.quoted(p, first);
    if (this.s.startsWith('{}', p) || this.s.startsWith('[]', p)) return this.after(p, p + 2, undefined);
    // A plain scalar starts with no indicator, but for a `-` before a non-space (`-1`, `--flag`).
    if (INDICATORS.has(first) && !(first === '-' && p + 1 < this.end && this.at(p + 1) !== SPACE)) return undefined;
    return this.plain(p);
  }

  private quoted(p: number, quote: string): Node | undefined {
    const close = quote === '"' ? closeDoubleQuoted(this.s, p, this.end) : closeSingleQuoted(this.s, p, this.end);
    if (close < 0) return undefined;
    const raw = this.s.slice(p + 1, close - 1);
    // A double-quoted key with escapes is left to the parser rather than decoded here.
    const key = quote === "'" ? raw.replaceAll("''", "'") : raw.includes('\\') ? undefined : raw;
    return this.after(p, close, key);
  }

  /** A plain scalar: it ends at a `: ` (a key), a ` #` (a comment) or the end of the line. */
  private plain(p: number): Node {
    for (let i = p; i < this.end; i++) {
      if (this.isSeparator(i)) return { isKey: true, afterColon: i + 1, key: plainKey(this.s, p, i) };
      if (this.at(i) === HASH && this.at(i - 1) === SPACE) break;
    }
    return SCALAR;
  }

  /** What follows a quoted scalar or `{}`/`[]` (from `start` to `close`): `: ` for a key, or the end of the line. */
  private after(start: number, close: number, key: string | undefined): Node | undefined {
    const p = this.skipSpaces(close);
    if (this.isSeparator(p)) return p - start <= MAX_KEY_CHARS ? { isKey: true, afterColon: p + 1, key } : undefined;
    return this.isRestEmpty(close) ? SCALAR : undefined;
  }
}

/** The text of the plain key from `p` to the `:` at `colon`, when the core schema certainly reads it as that string. */
function plainKey(s: string, p: number, colon: number): string | undefined {
  if (colon - p > MAX_KEY_CHARS || !(isKeyLetter(s.charCodeAt(p)) || (s[p] === '.' && isKeyLetter(s.charCodeAt(p + 1))))) return undefined;
  let end = colon;
  while (s.charCodeAt(end - 1) === SPACE) end--;
  const text = s.slice(p, end);
  return text.length <= LONGEST_NON_STRING_KEY && NON_STRING_KEYS.has(text) ? undefined : text;
}

/** A-Z, a-z, `_` or `/`: a plain key starting with one is a string, but for the words above. */
function isKeyLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2f;
}

/** Index after the closing `'` on this line, or -1. `''` is an escaped quote. */
function closeSingleQuoted(s: string, open: number, end: number): number {
  for (let i = open + 1; i < end; i++) {
    if (s[i] !== "'") continue;
    if (s[i + 1] !== "'") return i + 1;
    i++;
  }
  return -1;
}

// The escapes YAML 1.2 defines (tab excepted: tabs are declined anyway), and the hex digits
// after \x and \u. \U (eight digits, easy to make out of range) is left to the parser.
const SIMPLE_ESCAPES = new Set('0abtnvfre "/\\N_LP');
const HEX = /^[0-9A-Fa-f]+$/;

/** Index after the closing `"` on this line, or -1 (not closed, or an escape we do not accept). */
function closeDoubleQuoted(s: string, open: number, end: number): number {
  for (let i = open + 1; i < end; i++) {
    const c = s[i];
    if (c === '"') return i + 1;
    if (c !== '\\') continue;
    const escape = s[i + 1] ?? '';
    const digits = escape === 'x' ? 2 : escape === 'u' ? 4 : 0;
    if (digits > 0) {
      if (i + 2 + digits > end || !HEX.test(s.slice(i + 2, i + 2 + digits))) return -1;
      i += 1 + digits;
    } else if (SIMPLE_ESCAPES.has(escape) && i + 1 < end) {
      i += 1;
    } else {
      return -1;
    }
  }
  return -1;
}

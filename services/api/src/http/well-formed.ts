// In a `u` regex a proper surrogate pair is one code point, so only unpaired halves match.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The bytes were decoded as strict UTF-8, which cannot carry a surrogate: a lone one can only
 * come from a `\uD800`–`\uDFFF` escape. Bodies without such an escape need no walk.
 */
function mayHoldSurrogateEscape(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return text.includes('\\ud') || text.includes('\\uD');
}

interface Pending {
  value: unknown;
  key?: string;
  parent?: Pending;
}

// A path deeper than this is reported by its start (a body can nest a million levels).
const MAX_PATH_SEGMENTS = 16;

function pathOf(found: Pending, lastKey?: string): string {
  const keys = lastKey === undefined ? [] : [lastKey];
  for (let at: Pending | undefined = found; at?.key !== undefined; at = at.parent) keys.push(at.key);
  keys.reverse();
  return keys.length > MAX_PATH_SEGMENTS ? `${keys.slice(0, MAX_PATH_SEGMENTS).join('.')}.…` : keys.join('.');
}

/** Checks one value: the path of its lone surrogate, if any; its children are pushed onto `stack`. */
function check(pending: Pending, stack: Pending[]): string | undefined {
  const { value } = pending;
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? pathOf(pending) : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key)) return pathOf(pending, key.replace(LONE_SURROGATE, '\ufffd'));
    stack.push({ value: item, key, parent: pending });
  }
  return undefined;
}

/** The path of a string (key or value) that is not well-formed UTF-16, else undefined. */
function firstLoneSurrogate(root: unknown): string | undefined {
  // Iterative: JSON.parse accepts nesting far deeper than the call stack.
  const stack: Pending[] = [{ value: root }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const found = check(next, stack);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Where a parsed JSON body holds an unpaired UTF-16 surrogate (`"\ud800"`) in a key or string, as
 * a dotted path (`''` for the body itself), or undefined when it holds none. PostgreSQL would store
 * U+FFFD instead, silently changing names and values; I-JSON (RFC 7493) forbids them.
 */
export function loneSurrogatePath(value: unknown, bytes: Uint8Array): string | undefined {
  return mayHoldSurrogateEscape(bytes) ? firstLoneSurrogate(value) : undefined;
}

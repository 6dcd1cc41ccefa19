/** JSON pointers (RFC 6901): how drift names a field, on the wire and in ignore rules. */

export type Json = unknown;

const escape = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (token: string) => token.replace(/~1/g, '/').replace(/~0/g, '~');

export function pointerOf(tokens: readonly (string | number)[]): string {
  return tokens.map((t) => `/${escape(String(t))}`).join('');
}

export function tokensOf(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map(unescape);
}

export const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value at the tokens (array items by their index), undefined when the path leads nowhere. */
export function valueAt(root: Json, tokens: readonly string[]): Json {
  let node: Json = root;
  for (const token of tokens) {
    if (Array.isArray(node)) node = /^\d+$/.test(token) ? node[Number(token)] : undefined;
    else if (isObject(node)) node = node[token];
    else return undefined;
  }
  return node;
}

/**
 * Whether `pattern` (an ignore rule's path, `*` matching any one segment) is `path` or one of its
 * ancestors: a rule for /spec/template covers every field below it.
 */
export function coversPath(pattern: string, path: string): boolean {
  const want = tokensOf(pattern);
  const have = tokensOf(path);
  if (want.length > have.length) return false;
  return want.every((token, i) => token === '*' || token === have[i]);
}

/**
 * Tera syntax that nunjucks' parser does not read, rewritten inside `{{ }}` and `{% %}` only
 * (text, comments and `{% raw %}` blocks are left alone, and so are string literals):
 *
 * - `items.0` (Tera's index notation) becomes `items[0]`;
 * - backtick strings (`` `text` ``) become double-quoted strings;
 * - `{% set_global x = … %}` becomes `{% set x = … %}` (nunjucks' `set` already writes to an
 *   enclosing variable of the same name, which is what `set_global` is used for in loops).
 */
export function preprocess(src: string): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const start = nextDelimiter(src, i);
    if (start < 0) return out + src.slice(i);
    out += src.slice(i, start);
    const kind = src.slice(start, start + 2);
    if (kind === '{#') {
      const end = src.indexOf('#}', start + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(start, stop);
      i = stop;
      continue;
    }
    const close = kind === '{{' ? '}}' : '%}';
    const end = tagEnd(src, start + 2, close);
    const body = src.slice(start + 2, end);
    if (kind === '{%' && /^-?\s*raw\s*-?$/.test(body)) {
      const endRaw = /\{%-?\s*endraw\s*-?%\}/g;
      endRaw.lastIndex = end;
      const found = endRaw.exec(src);
      const stop = found ? found.index + found[0].length : src.length;
      out += src.slice(start, stop);
      i = stop;
      continue;
    }
    const statement = kind === '{%' ? body.replace(/^(-?\s*)set_global\b/, '$1set') : body;
    out += kind + rewriteExpression(statement) + (end < src.length ? close : '');
    i = Math.min(src.length, end + 2);
  }
  return out;
}

function nextDelimiter(src: string, from: number): number {
  const hits = ['{{', '{%', '{#'].map((d) => src.indexOf(d, from)).filter((n) => n >= 0);
  return hits.length === 0 ? -1 : Math.min(...hits);
}

/** Index of the closing delimiter, skipping quoted strings; src.length if unterminated. */
function tagEnd(src: string, from: number, close: string): number {
  let quote: string | undefined;
  for (let j = from; j < src.length; j++) {
    const c = src[j]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (src.startsWith(close, j)) return j;
  }
  return src.length;
}

const IDENT = /[A-Za-z0-9_]/;

/** True when the word ending at `end` (exclusive) is an identifier, not a number like `1.5`. */
function endsIdentifier(text: string, end: number): boolean {
  const before = text[end - 1];
  if (before === ']' || before === ')') return true;
  let k = end;
  while (k > 0 && IDENT.test(text[k - 1]!)) k--;
  return k < end && /[A-Za-z_]/.test(text[k]!);
}

/** A string literal starting at `j`: its rewritten text and the index of its closing quote. */
function stringLiteral(text: string, j: number): [string, number] {
  const quote = text[j]!;
  const close = text.indexOf(quote, j + 1);
  const stop = close < 0 ? text.length : close;
  const literal = text.slice(j + 1, stop);
  return [quote === '`' ? JSON.stringify(literal) : quote + literal + (close < 0 ? '' : quote), stop];
}

function rewriteExpression(text: string): string {
  let out = '';
  for (let j = 0; j < text.length; j++) {
    const c = text[j]!;
    if (c === '"' || c === "'" || c === '`') {
      const [literal, stop] = stringLiteral(text, j);
      out += literal;
      j = stop;
      continue;
    }
    const digits = c === '.' ? /^\d+/.exec(text.slice(j + 1))?.[0] : undefined;
    if (digits && endsIdentifier(text, j) && !IDENT.test(text[j + 1 + digits.length] ?? '')) {
      out += `[${digits}]`;
      j += digits.length;
      continue;
    }
    out += c;
  }
  return out;
}

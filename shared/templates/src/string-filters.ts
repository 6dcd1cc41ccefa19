import { CallArgs, describe } from './args.ts';
import { TemplateRenderError, printed } from './values.ts';

/** A filter body: the (present) input and its arguments. */
export type FilterBody = (value: unknown, args: CallArgs) => unknown;

function text(filter: string, value: unknown): string {
  if (typeof value !== 'string') throw new TemplateRenderError(`Filter \`${filter}\` expects a string, got ${describe(value)}`);
  return value;
}

/** Applies `fn` to a string input (the common shape of Tera's string filters). */
const onText =
  (filter: string, fn: (s: string, args: CallArgs) => unknown): FilterBody =>
  (value, args) =>
    fn(text(filter, value), args);

function trimMatches(s: string, pat: string, atStart: boolean): string {
  if (pat === '') return s;
  let out = s;
  while (atStart ? out.startsWith(pat) : out.endsWith(pat)) out = atStart ? out.slice(pat.length) : out.slice(0, -pat.length);
  return out;
}

function truncate(s: string, args: CallArgs): string {
  const length = args.number('length', 0, 255);
  const end = args.string('end', 1, '…');
  const chars = [...s];
  return chars.length <= length ? s : chars.slice(0, length).join('') + end;
}

function slugify(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;', '/': '&#x2F;' };
const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

// RFC 3986 unreserved characters stay; urlencode also keeps '/'.
const urlencode = (s: string, keep: RegExp) =>
  [...new TextEncoder().encode(s)]
    .map((b) => {
      const c = String.fromCharCode(b);
      return b < 0x80 && keep.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');

function int(value: unknown, args: CallArgs): number {
  const fallback = args.get('default', 0) ?? 0;
  const base = args.number('base', 1, 10);
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value !== 'string') return fallback as number;
  const digits = value.trim().replace(/^0[box]/i, '');
  const parsed = parseInt(digits, base);
  return Number.isNaN(parsed) || !new RegExp(`^[-+]?[0-9a-z]+$`, 'i').test(digits) ? (fallback as number) : parsed;
}

function float(value: unknown, args: CallArgs): number {
  const fallback = args.get('default', 0) ?? 0;
  if (typeof value === 'number') return value;
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value.trim()) : NaN;
  return Number.isNaN(parsed) ? (fallback as number) : parsed;
}

function round(value: unknown, args: CallArgs): number {
  if (typeof value !== 'number') throw new TemplateRenderError(`Filter \`round\` expects a number, got ${describe(value)}`);
  const method = args.string('method', 0, 'common');
  const factor = 10 ** args.number('precision', 1, 0);
  const fn = { common: Math.round, ceil: Math.ceil, floor: Math.floor }[method];
  if (!fn) throw new TemplateRenderError('Filter `round`: `method` must be "common", "ceil" or "floor"');
  // Math.round rounds halves up; Tera (Rust's f64::round) rounds them away from zero.
  const rounded = method === 'common' ? Math.sign(value) * Math.round(Math.abs(value) * factor) : fn(value * factor);
  return rounded / factor;
}

export const stringFilters: Record<string, FilterBody> = {
  lower: onText('lower', (s) => s.toLowerCase()),
  upper: onText('upper', (s) => s.toUpperCase()),
  capitalize: onText('capitalize', (s) => (s === '' ? s : s[0]!.toUpperCase() + s.slice(1).toLowerCase())),
  title: onText('title', (s) => s.replace(/\b([\w'])([\w']*)/g, (_m, f: string, r: string) => f.toUpperCase() + r.toLowerCase())),
  wordcount: onText('wordcount', (s) => s.split(/\s+/).filter(Boolean).length),
  trim: onText('trim', (s) => s.trim()),
  trim_start: onText('trim_start', (s) => s.trimStart()),
  trim_end: onText('trim_end', (s) => s.trimEnd()),
  trim_start_matches: onText('trim_start_matches', (s, a) => trimMatches(s, a.string('pat', 0), true)),
  trim_end_matches: onText('trim_end_matches', (s, a) => trimMatches(s, a.string('pat', 0), false)),
  replace: onText('replace', (s, a) => s.split(a.string('from', 0)).join(a.string('to', 1))),
  addslashes: onText('addslashes', (s) => s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/"/g, '\\"')),
  slugify: onText('slugify', slugify),
  truncate: onText('truncate', truncate),
  linebreaksbr: onText('linebreaksbr', (s) => s.replace(/\r?\n/g, '<br>')),
  spaceless: onText('spaceless', (s) => s.replace(/>\s+</g, '><')),
  striptags: onText('striptags', (s) => s.replace(/<[^>]*>/g, '')),
  split: onText('split', (s, a) => s.split(a.string('pat', 0))),
  urlencode: onText('urlencode', (s) => urlencode(s, /[A-Za-z0-9\-._~/]/)),
  urlencode_strict: onText('urlencode_strict', (s) => urlencode(s, /[A-Za-z0-9]/)),
  escape: onText('escape', (s) => s.replace(/[&<>"'/]/g, (c) => HTML_ESCAPES[c]!)),
  escape_xml: onText('escape_xml', (s) => s.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!)),
  safe: (value) => value,
  as_str: (value) => printed(value),
  int,
  float,
  round,
  abs: (value) => {
    if (typeof value !== 'number') throw new TemplateRenderError(`Filter \`abs\` expects a number, got ${describe(value)}`);
    return Math.abs(value);
  },
  pluralize: (value, args) => {
    if (typeof value !== 'number') throw new TemplateRenderError(`Filter \`pluralize\` expects a number, got ${describe(value)}`);
    return Math.abs(value) === 1 ? args.string('singular', 0, '') : args.string('plural', 1, 's');
  },
};

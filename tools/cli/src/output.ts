import { Document, Scalar, visit } from 'yaml';
import { CliError } from './errors.ts';
import { hasControls, oneLine } from './terminal.ts';

export const FORMATS = ['table', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
}

export function parseFormat(raw: string | undefined): Format {
  const format = raw ?? 'table';
  if (!(FORMATS as readonly string[]).includes(format)) throw new CliError(`unknown output format "${format}": use ${FORMATS.join(', ')}`);
  return format as Format;
}

/** A cell is one line whatever the hub sent (a newline in a name must not start a row of its own). */
const cell = (value: unknown): string => (value === null || value === undefined || value === '' ? '-' : oneLine(String(value)));

/** kubectl-style columns: upper-case headers, two spaces between columns, `-` for empty cells. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** `key: value` lines for one object (describe's human form). */
export function renderFields(fields: readonly [string, unknown][]): string {
  const width = Math.max(...fields.map(([k]) => k.length)) + 1;
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width)} ${cell(v)}`).join('\n') + '\n';
}

/**
 * YAML whose strings holding control characters are double-quoted, the one style where the
 * terminal's `\uXXXX` escapes (terminal.ts) read back as the same characters.
 */
function yamlOf(data: unknown): string {
  const doc = new Document(data);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && hasControls(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString();
}

/**
 * The data as JSON or YAML (machine formats print the hub's objects unchanged: the control
 * characters terminal.ts escapes sit inside quoted strings, where the escapes parse back), or
 * the human text.
 */
export function render(data: unknown, format: Format, human: () => string): string {
  if (format === 'json') return JSON.stringify(data, null, 2) + '\n';
  if (format === 'yaml') return yamlOf(data);
  return human();
}

/** "12s", "5m", "3h", "2d" since `iso`; "-" when unset. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

/** One table cell of free text: the first line, at most `max` characters (describe/-o json keep it whole). */
export function truncate(text: string | null | undefined, max = 80): string | null {
  if (!text) return null;
  const line = text.split('\n')[0]!;
  return line.length > max || line !== text ? `${line.slice(0, max - 1)}…` : line;
}

export const short = (id: string | null | undefined): string => (id ? id.slice(0, 8) : '-');

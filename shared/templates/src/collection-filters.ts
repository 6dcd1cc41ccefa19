import { attributeAt, describe, type CallArgs } from './args.ts';
import type { FilterBody } from './string-filters.ts';
import { TemplateRenderError, assertTextSize, isPlainObject, printed } from './values.ts';

function list(filter: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new TemplateRenderError(`Filter \`${filter}\` expects an array, got ${describe(value)}`);
  return value;
}

const onList =
  (filter: string, fn: (items: unknown[], args: CallArgs) => unknown): FilterBody =>
  (value, args) =>
    fn(list(filter, value), args);

/** serde_json keeps object keys sorted (its default map), so JSON output here sorts them too. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortedKeys(value[k])]),
  );
}

export function jsonEncode(value: unknown, pretty = false): string {
  assertTextSize(value);
  return JSON.stringify(sortedKeys(value), null, pretty ? 2 : undefined) ?? 'null';
}

const rank = (v: unknown): number | string => {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (Array.isArray(v)) return v.length;
  throw new TemplateRenderError(`Filter \`sort\` cannot order ${describe(v)}`);
};

function sort(items: unknown[], args: CallArgs): unknown[] {
  const attribute = args.has('attribute', 0) ? args.string('attribute', 0) : undefined;
  const key = (item: unknown) => rank(attribute === undefined ? item : attributeAt(item, attribute));
  return [...items].sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

function unique(items: unknown[], args: CallArgs): unknown[] {
  const attribute = args.has('attribute', 0) ? args.string('attribute', 0) : undefined;
  const caseSensitive = args.boolean('case_sensitive', 1, false);
  const seen = new Set<string>();
  return items.filter((item) => {
    const raw = attribute === undefined ? item : attributeAt(item, attribute);
    const key = JSON.stringify(typeof raw === 'string' && !caseSensitive ? raw.toLowerCase() : raw);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function slice(items: unknown[], args: CallArgs): unknown[] {
  const at = (i: number) => (i < 0 ? Math.max(0, items.length + i) : i);
  const start = at(args.number('start', 0, 0));
  const end = args.has('end', 1) ? at(args.number('end', 1)) : items.length;
  return items.slice(start, end);
}

function groupBy(items: unknown[], args: CallArgs): Record<string, unknown[]> {
  const attribute = args.string('attribute', 0);
  // No prototype: a group named `__proto__` is just a key.
  const groups = Object.create(null) as Record<string, unknown[]>;
  for (const item of items) {
    const key = attributeAt(item, attribute);
    if (key === undefined || key === null) continue;
    (groups[printed(key)] ??= []).push(item);
  }
  return groups;
}

function filterBy(items: unknown[], args: CallArgs): unknown[] {
  const attribute = args.string('attribute', 0);
  const wanted = args.get('value', 1);
  return items.filter((item) => {
    const v = attributeAt(item, attribute);
    if (v === undefined || v === null) return false;
    return wanted === undefined || jsonEncode(v) === jsonEncode(wanted);
  });
}

function length(value: unknown): number {
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (isPlainObject(value)) return Object.keys(value).length;
  throw new TemplateRenderError(`Filter \`length\` expects a string, an array or an object, got ${describe(value)}`);
}

function reverse(value: unknown): unknown {
  if (typeof value === 'string') return [...value].reverse().join('');
  return [...list('reverse', value)].reverse();
}

function get(value: unknown, args: CallArgs): unknown {
  const key = args.string('key', 0);
  if (!isPlainObject(value)) throw new TemplateRenderError(`Filter \`get\` expects an object, got ${describe(value)}`);
  if (Object.hasOwn(value, key)) return value[key];
  if (args.has('default', 1)) return args.get('default', 1);
  throw new TemplateRenderError(`Filter \`get\`: the object has no key \`${key}\``);
}

const nth = (items: unknown[], index: number) => (index >= 0 && index < items.length ? items[index] : '');

export const collectionFilters: Record<string, FilterBody> = {
  first: onList('first', (items) => nth(items, 0)),
  last: onList('last', (items) => nth(items, items.length - 1)),
  nth: onList('nth', (items, a) => nth(items, a.number('n', 0))),
  join: onList('join', (items, a) => items.map(printed).join(a.string('sep', 0, ''))),
  sort: onList('sort', sort),
  unique: onList('unique', unique),
  slice: onList('slice', slice),
  group_by: onList('group_by', groupBy),
  filter: onList('filter', filterBy),
  map: onList('map', (items, a) => {
    const attribute = a.string('attribute', 0);
    return items.map((item) => attributeAt(item, attribute)).filter((v) => v !== undefined);
  }),
  concat: onList('concat', (items, a) => {
    const extra = a.required('with', 0);
    return Array.isArray(extra) ? [...items, ...extra] : [...items, extra];
  }),
  length,
  reverse,
  get,
  json_encode: (value, a) => jsonEncode(value, a.boolean('pretty', 0, false)),
};

import { PREVIEW_LIMITS, type PreviewFieldChange } from '@brokkr/contracts';
import { CHECKSUM_ANNOTATION, FIELD_MANAGER, LAST_APPLIED_ANNOTATION, OBJECT_ID_ANNOTATION } from '../manifest/keys.ts';

type Json = unknown;

/** Metadata the apiserver or our stamp rewrites on every apply: never a change worth showing. */
const VOLATILE_METADATA = ['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid', 'selfLink'];
/** Our per-version stamp (a preview gets its own checksum and id): it changes with every deployment object. */
const VOLATILE_ANNOTATIONS = [CHECKSUM_ANNOTATION, OBJECT_ID_ANNOTATION, LAST_APPLIED_ANNOTATION];

/** The object without what says nothing about its desired content (status, server bookkeeping, our version stamp). */
export function comparable(object: Record<string, Json>): Record<string, Json> {
  const copy = structuredClone(object);
  delete copy.status;
  const metadata = copy.metadata as Record<string, Json> | undefined;
  if (metadata) {
    for (const key of VOLATILE_METADATA) delete metadata[key];
    const annotations = metadata.annotations as Record<string, string> | undefined;
    if (annotations) {
      for (const key of VOLATILE_ANNOTATIONS) delete annotations[key];
      if (Object.keys(annotations).length === 0) delete metadata.annotations;
    }
  }
  return copy;
}

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b);
const keyPath = (base: string, key: string) =>
  /^[A-Za-z_][\w-]*$/.test(key) ? (base ? `${base}.${key}` : key) : `${base}[${JSON.stringify(key)}]`;

/** The leaf paths where `before` and `after` differ (arrays of equal length element by element, else whole). */
function changedPaths(before: Json, after: Json, path: string, out: string[]): void {
  if (same(before, after)) return;
  if (isObject(before) && isObject(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)]))
      changedPaths(before[key], after[key], keyPath(path, key), out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((item, i) => changedPaths(item, after[i], `${path}[${i}]`, out));
    return;
  }
  out.push(path);
}

/** The tokens changedPaths writes: `.key`, `["key"]`, `[0]`. */
function tokensOf(path: string): (string | number)[] {
  const tokens = path.match(/[A-Za-z_][\w-]*|\["(?:[^"\\]|\\.)*"\]|\[\d+\]/g) ?? [];
  return tokens.map((token) =>
    token.startsWith('["') ? (JSON.parse(token.slice(1, -1)) as string) : token.startsWith('[') ? Number(token.slice(1, -1)) : token,
  );
}

function valueAt(root: Json, path: string): Json {
  let node: Json = root;
  for (const key of tokensOf(path)) {
    if (node === undefined || node === null) return undefined;
    node = (node as Record<string | number, Json>)[key];
  }
  return node;
}

/**
 * A `managedFields` field set (fieldsV1): `f:<field>`, list items by `k:<key fields>`, `v:<value>`
 * or `i:<index>`, `.` for the node itself; an empty set owns its node whole.
 */
interface FieldSet {
  [member: string]: FieldSet;
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: FieldSet;
}

/** Who set what in the dry run's result: the agent's own apply (the manifest) and every other writer. */
interface Owners {
  ours: FieldSet | undefined;
  others: (FieldSet | undefined)[];
}

function ownersOf(dryRun: Record<string, Json>): Owners {
  const entries = ((dryRun.metadata as { managedFields?: ManagedFieldsEntry[] } | undefined)?.managedFields ?? []).filter((e): boolean =>
    isObject(e),
  );
  const isOurs = (e: ManagedFieldsEntry) => e.manager === FIELD_MANAGER && e.operation === 'Apply' && !e.subresource;
  return { ours: entries.find(isOurs)?.fieldsV1, others: entries.filter((e) => !isOurs(e)).map((e) => e.fieldsV1) };
}

const ownsWhole = (set: FieldSet) => Object.keys(set).length === 0;
const ownsPartsOf = (set: FieldSet | undefined) => set !== undefined && Object.keys(set).some((member) => member !== '.');

function parsedMember(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** Whether a list member name (`k:{"name":"x"}`, `v:"a"`, `i:0`) names this item at this index. */
function namesItem(member: string, item: Json, index: number): boolean {
  if (member === `i:${index}`) return true;
  const spec = member.startsWith('k:') || member.startsWith('v:') ? parsedMember(member.slice(2)) : undefined;
  if (member.startsWith('v:')) return spec !== undefined && same(spec, item);
  return isObject(spec) && isObject(item) && Object.entries(spec).every(([k, v]) => same(item[k], v));
}

/** The set's member for `parent[token]` (a field, or a list item by its key fields, value or index); a whole owner owns it too. */
function memberOf(set: FieldSet | undefined, parent: Json, token: string | number): FieldSet | undefined {
  if (set === undefined || ownsWhole(set)) return set;
  if (typeof token === 'string') return set[`f:${token}`];
  const item = Array.isArray(parent) ? (parent[token] as Json) : undefined;
  return Object.entries(set).find(([member]) => namesItem(member, item, token))?.[1];
}

/**
 * The part of `value` the manifest set: the fields and list items of the agent's own apply, as
 * the dry run holds them. A node the agent owns whole is shown whole only when no other writer
 * holds a part inside it (a map the manifest gives empty keeps other writers' keys).
 */
function ownPart(value: Json, ours: FieldSet | undefined, others: (FieldSet | undefined)[]): Json {
  if (ours === undefined || value === undefined) return undefined;
  if (ownsWhole(ours)) return others.some(ownsPartsOf) ? undefined : value;
  const part = (key: string | number) =>
    ownPart(
      (value as Record<string | number, Json>)[key],
      memberOf(ours, value, key),
      others.map((o) => memberOf(o, value, key)),
    );
  if (Array.isArray(value)) {
    const items = value.map((_, i) => part(i)).filter((item) => item !== undefined);
    return items.length > 0 || value.length === 0 ? items : undefined;
  }
  if (isObject(value)) {
    const fields = Object.keys(value).flatMap((key) => {
      const kept = part(key);
      return kept === undefined ? [] : [[key, kept] as const];
    });
    return fields.length > 0 || Object.keys(value).length === 0 ? Object.fromEntries(fields) : undefined;
  }
  return undefined;
}

/** The value at `path` in the dry run, keeping only what the agent's own apply set there (undefined: none of it). */
function ownValueAt(root: Json, path: string, owners: Owners): Json {
  let node: Json = root;
  let { ours, others } = owners;
  for (const key of tokensOf(path)) {
    if (node === undefined || node === null || typeof node !== 'object') return undefined;
    const parent = node;
    ours = memberOf(ours, parent, key);
    others = others.map((o) => memberOf(o, parent, key));
    node = (parent as Record<string | number, Json>)[key];
  }
  return ownPart(node, ours, others);
}

function shown(value: Json): string | null {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text.length > PREVIEW_LIMITS.valueChars ? `${text.slice(0, PREVIEW_LIMITS.valueChars)}…` : text;
}

/** Secret payloads are never copied into a preview result (it is readable by the stack's owner through the hub). */
const withheld = (kind: string | undefined, path: string) => kind === 'Secret' && /^(data|stringData)\b/.test(path);

export interface FieldDiff {
  changes: PreviewFieldChange[];
  truncated: boolean;
}

export interface DiffOptions {
  /**
   * The live object is not the stack's yet (it is being adopted): none of its values is shown.
   * `before` is null, and `after` holds only what the stack's own apply set: the dry run merges
   * the live object's map keys and list items (an env list, finalizers) into the result, and its
   * `managedFields` entry for the agent's field manager says which parts are the manifest's.
   * Without that entry, paths only.
   */
  withholdBefore?: boolean;
}

/** A compact diff of the live object against the dry-run result: at most PREVIEW_LIMITS.diffPaths paths, values cut short. */
export function fieldDiff(live: Record<string, Json>, dryRun: Record<string, Json>, options: DiffOptions = {}): FieldDiff {
  const before = comparable(live);
  const after = comparable(dryRun);
  const owners = options.withholdBefore ? ownersOf(dryRun) : undefined;
  const paths: string[] = [];
  changedPaths(before, after, '', paths);
  const kind = typeof after.kind === 'string' ? after.kind : undefined;
  const changes = paths
    .slice(0, PREVIEW_LIMITS.diffPaths)
    .map((path) =>
      withheld(kind, path)
        ? { path, before: null, after: null }
        : owners
          ? { path, before: null, after: shown(ownValueAt(after, path, owners)) }
          : { path, before: shown(valueAt(before, path)), after: shown(valueAt(after, path)) },
    );
  return { changes, truncated: paths.length > PREVIEW_LIMITS.diffPaths };
}

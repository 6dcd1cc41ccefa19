import { FIELD_MANAGER } from '../manifest/keys.ts';
import { isObject, type Json } from './pointer.ts';

/**
 * A `managedFields` field set (fieldsV1): `f:<field>`, list items by `k:<key fields>`, `v:<value>`
 * or `i:<index>`, `.` for the node itself; an empty set owns its node whole.
 */
export interface FieldSet {
  [member: string]: FieldSet;
}

export interface ManagedEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: string;
  fieldsV1?: FieldSet;
}

/** Who set a field: the managedFields entry that owns it now. */
export interface Attribution {
  manager: string | null;
  operation: string | null;
  time: string | null;
}

export const UNKNOWN: Attribution = { manager: null, operation: null, time: null };

export function entriesOf(object: Record<string, Json>): ManagedEntry[] {
  const entries = (object.metadata as { managedFields?: unknown[] } | undefined)?.managedFields ?? [];
  return entries.filter((e): e is ManagedEntry => isObject(e));
}

/** The agent's own apply: what the manifest sets. */
export const isOurs = (e: ManagedEntry) => e.manager === FIELD_MANAGER && e.operation === 'Apply' && !e.subresource;

const ownsWhole = (set: FieldSet) => Object.keys(set).length === 0;
const same = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b);

function parsedMember(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** Whether a list member name (`k:{"name":"x"}`, `v:"a"`, `i:0`) names this item at this index. */
export function namesItem(member: string, item: Json, index: number): boolean {
  if (member === `i:${index}`) return true;
  if (member.startsWith('v:')) {
    const spec = parsedMember(member.slice(2));
    return spec !== undefined && same(spec, item);
  }
  if (!member.startsWith('k:')) return false;
  const spec = parsedMember(member.slice(2));
  return isObject(spec) && isObject(item) && Object.entries(spec).every(([k, v]) => same(item[k], v));
}

/** The member of `set` for `parent[token]` (a field, or a list item by its keys, value or index); a whole owner owns it too. */
export function memberOf(set: FieldSet | undefined, parent: Json, token: string): FieldSet | undefined {
  if (set === undefined || ownsWhole(set)) return set;
  if (Array.isArray(parent)) {
    const index = Number(token);
    return Object.entries(set).find(([member]) => namesItem(member, parent[index], index))?.[1];
  }
  return set[`f:${token}`];
}

/** Whether the set owns the field at the tokens of `root` (or an ancestor of it whole). */
export function owns(set: FieldSet | undefined, root: Json, tokens: readonly string[]): boolean {
  let node: Json = root;
  let member = set;
  for (const token of tokens) {
    if (member === undefined) return false;
    if (ownsWhole(member)) return true;
    member = memberOf(member, node, token);
    node = Array.isArray(node) ? node[Number(token)] : isObject(node) ? node[token] : undefined;
  }
  return member !== undefined;
}

/**
 * The entry that owns the live field now: another writer before the agent (it changed what the
 * agent set), the most recent one first. A field nobody owns (removed by hand) is UNKNOWN.
 */
export function ownerOf(live: Record<string, Json>, tokens: readonly string[]): Attribution {
  const owners = entriesOf(live)
    .filter((e) => e.subresource !== 'status' && owns(e.fieldsV1, live, tokens))
    .sort((a, b) => Number(isOurs(a)) - Number(isOurs(b)) || (b.time ?? '').localeCompare(a.time ?? ''));
  const owner = owners[0];
  return owner ? { manager: owner.manager ?? null, operation: owner.operation ?? null, time: owner.time ?? null } : UNKNOWN;
}

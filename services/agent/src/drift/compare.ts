import { entriesOf, isOurs, memberOf, ownerOf, type Attribution, type FieldSet, type ManagedEntry, namesItem } from './field-owners.ts';
import { isObject, valueAt, type Json } from './pointer.ts';

/** One drifted field before the stack's policy looks at it. */
export interface RawDrift {
  tokens: string[];
  /** What the agent's apply makes of it (undefined: the stack does not set it). */
  desired: Json;
  /** What the cluster holds (undefined: removed). */
  live: Json;
  owner: Attribution;
}

/** Metadata the apiserver writes on every change: never drift. `status` is not either. */
const BOOKKEEPING = new Set([
  'managedFields',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'uid',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
]);

/**
 * Writers that are the cluster itself (controllers' annotations and finalizers, the scheduler,
 * the kubelet): what they add to an object is not a change made behind the agent's back.
 */
const SYSTEM_MANAGERS = /^(kube-controller-manager|kube-scheduler|kubelet|kube-apiserver|before-first-apply)$/;

/**
 * The object without status and the apiserver's bookkeeping, and without its kind and apiVersion:
 * they are what the object is, not content, and the items of a listing do not carry them.
 */
export function comparable(object: Record<string, Json>): Record<string, Json> {
  const copy = structuredClone(object);
  delete copy.status;
  delete copy.kind;
  delete copy.apiVersion;
  const metadata = copy.metadata;
  if (isObject(metadata)) for (const key of BOOKKEEPING) delete metadata[key];
  return copy;
}

const same = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b);

/** The leaf paths where `a` and `b` differ (arrays of equal length item by item, else whole). */
function differences(a: Json, b: Json, tokens: string[], out: string[][]): void {
  if (same(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[key], b[key], [...tokens, key], out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item, i) => differences(item, b[i], [...tokens, String(i)], out));
    return;
  }
  out.push(tokens);
}

/**
 * Fields the stack sets whose live value is not what the agent's apply makes of it: the live
 * object against the server-side dry run of the desired one under the agent's field manager.
 * Defaults and admission mutations are in both, so they are not drift.
 */
export function ownedDrift(live: Record<string, Json>, dryRun: Record<string, Json>): RawDrift[] {
  const paths: string[][] = [];
  differences(comparable(live), comparable(dryRun), [], paths);
  return paths.map((tokens) => ({ tokens, desired: valueAt(dryRun, tokens), live: valueAt(live, tokens), owner: ownerOf(live, tokens) }));
}

/** The token a field-set member stands for under `node`: the field, or the index of the list item it names. */
function tokenFor(member: string, node: Json): string | undefined {
  if (member.startsWith('f:')) return member.slice(2);
  if (!Array.isArray(node)) return undefined;
  const index = node.findIndex((item, i) => namesItem(member, item, i));
  return index < 0 ? undefined : String(index);
}

const skipped = (tokens: readonly string[], token: string) =>
  (tokens.length === 0 && token === 'status') || (tokens.length === 1 && tokens[0] === 'metadata' && BOOKKEEPING.has(token));

/** Where `added` is in the live object: the node, its path, and the field sets of the other writer and of the agent there. */
interface Walk {
  theirs: FieldSet;
  ours: FieldSet | undefined;
  node: Json;
  tokens: string[];
}

/** What another writer holds under the node that the agent's apply does not: each such subtree once, whole. */
function added(at: Walk, owner: Attribution, out: RawDrift[]): void {
  for (const member of Object.keys(at.theirs)) {
    const token = member === '.' ? undefined : tokenFor(member, at.node);
    if (token === undefined || skipped(at.tokens, token)) continue;
    const child = Array.isArray(at.node) ? at.node[Number(token)] : isObject(at.node) ? at.node[token] : undefined;
    if (child === undefined) continue;
    const ours = memberOf(at.ours, at.node, token);
    const tokens = [...at.tokens, token];
    if (ours === undefined) out.push({ tokens, desired: undefined, live: child, owner });
    else if (Object.keys(ours).length > 0) added({ theirs: at.theirs[member]!, ours, node: child, tokens }, owner, out);
  }
}

const attribution = (e: ManagedEntry): Attribution => ({
  manager: e.manager ?? null,
  operation: e.operation ?? null,
  time: e.time ?? null,
});

/**
 * The full comparison's extra: fields someone added to the object that the stack does not set
 * (a label, an env entry, a sidecar written with `kubectl edit`), from the live object's
 * managedFields: what another writer owns and the agent's own apply does not, except the
 * cluster's own bookkeeping (SYSTEM_MANAGERS, status).
 */
export function addedFields(live: Record<string, Json>): RawDrift[] {
  const entries = entriesOf(live);
  const ours = entries.find(isOurs)?.fieldsV1;
  const out: RawDrift[] = [];
  for (const entry of entries) {
    if (isOurs(entry) || entry.subresource === 'status' || SYSTEM_MANAGERS.test(entry.manager ?? '') || !entry.fieldsV1) continue;
    added({ theirs: entry.fieldsV1, ours, node: live, tokens: [] }, attribution(entry), out);
  }
  return out;
}

const isUnder = (path: readonly string[], ancestor: readonly string[]) =>
  ancestor.length <= path.length && ancestor.every((t, i) => t === path[i]);

/** The object's drift by the stack's comparison: `owned` fields only, or `full` (also what others added). */
export function driftOf(live: Record<string, Json>, dryRun: Record<string, Json>, comparison: 'owned' | 'full'): RawDrift[] {
  const owned = ownedDrift(live, dryRun);
  if (comparison === 'owned') return owned;
  const extra = addedFields(live).filter((a) => !owned.some((o) => isUnder(a.tokens, o.tokens) || isUnder(o.tokens, a.tokens)));
  const unique = new Map(extra.map((a) => [a.tokens.join('/'), a]));
  return [...owned, ...unique.values()];
}

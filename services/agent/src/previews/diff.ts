import { PREVIEW_LIMITS, type PreviewFieldChange } from '@brokkr/contracts';
import { CHECKSUM_ANNOTATION, LAST_APPLIED_ANNOTATION, OBJECT_ID_ANNOTATION } from '../manifest/keys.ts';

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

function valueAt(root: Json, path: string): Json {
  // Re-walk by the same tokens changedPaths produced: `.key`, `["key"]`, `[0]`.
  const tokens = path.match(/[A-Za-z_][\w-]*|\["(?:[^"\\]|\\.)*"\]|\[\d+\]/g) ?? [];
  let node: Json = root;
  for (const token of tokens) {
    if (node === undefined || node === null) return undefined;
    const key = token.startsWith('["')
      ? (JSON.parse(token.slice(1, -1)) as string)
      : token.startsWith('[')
        ? Number(token.slice(1, -1))
        : token;
    node = (node as Record<string | number, Json>)[key];
  }
  return node;
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
  /** The live object is not the stack's yet (it is being adopted): its current values are not shown, only the paths and the new values. */
  withholdBefore?: boolean;
}

/** A compact diff of the live object against the dry-run result: at most PREVIEW_LIMITS.diffPaths paths, values cut short. */
export function fieldDiff(live: Record<string, Json>, dryRun: Record<string, Json>, options: DiffOptions = {}): FieldDiff {
  const before = comparable(live);
  const after = comparable(dryRun);
  const paths: string[] = [];
  changedPaths(before, after, '', paths);
  const kind = typeof after.kind === 'string' ? after.kind : undefined;
  const changes = paths
    .slice(0, PREVIEW_LIMITS.diffPaths)
    .map((path) =>
      withheld(kind, path)
        ? { path, before: null, after: null }
        : { path, before: options.withholdBefore ? null : shown(valueAt(before, path)), after: shown(valueAt(after, path)) },
    );
  return { changes, truncated: paths.length > PREVIEW_LIMITS.diffPaths };
}

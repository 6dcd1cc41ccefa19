import { DRIFT_VALUE_MAX_CHARS, type DriftField, type DriftIgnoreRule, type EffectiveDriftPolicy } from '@brokkr/contracts';
import type { RawDrift } from './compare.ts';
import { coversPath, pointerOf, type Json } from './pointer.ts';

/** The object a drift is about, as ignore rules name objects. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string | undefined;
  name: string;
}

const patterns = new Map<string, RegExp | null>();

/** A rule's manager pattern, compiled once; an invalid one (the hub refuses those) matches nothing. */
function pattern(source: string): RegExp | null {
  if (!patterns.has(source)) {
    try {
      patterns.set(source, new RegExp(source, 'u'));
    } catch {
      patterns.set(source, null);
    }
  }
  return patterns.get(source) ?? null;
}

/** Manager names are short; a longer one is cut before any pattern runs on it. */
const MANAGER_MAX = 256;

function targets(rule: DriftIgnoreRule, o: ObjectRef): boolean {
  const t = rule.target;
  if (!t) return true;
  return (
    (t.group === undefined || t.group === o.group) &&
    (t.kind === undefined || t.kind === o.kind) &&
    (t.namespace === undefined || t.namespace === (o.namespace ?? '')) &&
    (t.name === undefined || t.name === o.name)
  );
}

function managerMatches(rule: DriftIgnoreRule, manager: string | null): boolean {
  if (!rule.managers?.length) return true;
  if (manager === null) return false;
  const name = manager.slice(0, MANAGER_MAX);
  return rule.managers.some((p) => pattern(p)?.test(name) === true);
}

/** Whether some rule says this field's drift is none of the stack's business. */
export function fieldIgnored(rules: readonly DriftIgnoreRule[], o: ObjectRef, path: string, manager: string | null): boolean {
  return rules.some(
    (rule) => targets(rule, o) && (!rule.paths?.length || rule.paths.some((p) => coversPath(p, path))) && managerMatches(rule, manager),
  );
}

/** A deleted object is ignored only by a rule for the whole object (no paths, no managers). */
export function deletionIgnored(rules: readonly DriftIgnoreRule[], o: ObjectRef): boolean {
  return rules.some((rule) => targets(rule, o) && !rule.paths?.length && !rule.managers?.length);
}

const isSecret = (o: ObjectRef) => o.group === '' && o.kind === 'Secret';

/** A value as it may leave the cluster: null for none, cut to DRIFT_VALUE_MAX_CHARS of JSON. */
function shown(value: Json): Json {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text.length > DRIFT_VALUE_MAX_CHARS ? `${text.slice(0, DRIFT_VALUE_MAX_CHARS)}…` : value;
}

export interface Judged {
  /** What the stack's policy calls drift, as it is reported (Secret values withheld). */
  fields: DriftField[];
  /** Drifted fields an ignore rule covers (a correction leaves those alone where it can). */
  ignored: RawDrift[];
}

/** The stack's ignore rules over an object's drift, and each remaining field as the hub takes it. */
export function judge(raw: readonly RawDrift[], o: ObjectRef, policy: EffectiveDriftPolicy): Judged {
  const fields: DriftField[] = [];
  const ignored: RawDrift[] = [];
  for (const d of raw) {
    const path = pointerOf(d.tokens);
    if (fieldIgnored(policy.ignore, o, path, d.owner.manager)) {
      ignored.push(d);
      continue;
    }
    const values = isSecret(o) ? { desired: null, live: null, withheld: true } : { desired: shown(d.desired), live: shown(d.live) };
    fields.push({ path, ...values, ...d.owner });
  }
  return { fields, ignored };
}

import { WAVE_ANNOTATION } from '../manifest/keys.ts';
import type { KubeObject } from '../manifest/parse.ts';
import { ReconcileError } from './errors.ts';
import type { LiveObject } from './inventory.ts';
import { describe } from './plan.ts';

/**
 * In-stack waves (docs/dependencies.md, "In-stack waves"; docs/adr/0050): the objects of one
 * stack carry `brokkr.io/wave: "<integer>"` (default 0); the agent applies them wave by wave,
 * ascending, each once the one before is healthy, and deletes them highest wave first.
 */

interface Annotated {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
}

const INTEGER = /^[+-]?\d+$/;

/** The object's wave; throws naming the object when the annotation is not an integer. */
export function waveOf(o: Annotated): number {
  const raw = o.metadata.annotations?.[WAVE_ANNOTATION];
  if (raw === undefined) return 0;
  const text = String(raw).trim();
  const wave = Number(text);
  if (!INTEGER.test(text) || !Number.isSafeInteger(wave)) {
    throw new Error(`${describe(o)}: annotation ${WAVE_ANNOTATION} must be an integer, not ${JSON.stringify(raw)}`);
  }
  return wave === 0 ? 0 : wave; // no -0
}

/** Every document's wave, in order; every bad annotation is reported together, before anything is applied. */
export function wavesOf(docs: KubeObject[]): number[] {
  const problems: string[] = [];
  const waves = docs.map((d) => {
    try {
      return waveOf(d);
    } catch (err) {
      problems.push((err as Error).message);
      return 0;
    }
  });
  if (problems.length) throw new ReconcileError(problems, 'invalid wave annotation; nothing was applied:');
  return waves;
}

export interface Wave<T> {
  wave: number;
  items: T[];
}

/** Items grouped by wave, ascending; within a wave they keep their order. */
export function groupByWave<T>(items: T[], wave: (item: T, index: number) => number): Wave<T>[] {
  const groups = new Map<number, T[]>();
  items.forEach((item, i) => {
    const w = wave(item, i);
    groups.set(w, [...(groups.get(w) ?? []), item]);
  });
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([w, group]) => ({ wave: w, items: group }));
}

/** A live object's wave; one whose annotation is not an integer (set by hand) counts as 0. */
export function liveWave(o: LiveObject): number {
  try {
    return waveOf({ kind: o.resource.kind, metadata: o.meta });
  } catch {
    return 0;
  }
}

const isCrd = (o: LiveObject) => o.resource.kind === 'CustomResourceDefinition' && o.resource.group === 'apiextensions.k8s.io';
const isNamespace = (o: LiveObject) => o.resource.kind === 'Namespace' && !o.resource.group;

/**
 * The order objects are deleted in, batch after batch: waves highest first (within a wave
 * namespaced objects before cluster-scoped ones), then Namespaces, then CRDs — the reverse of the
 * apply. Without wave annotations: namespaced, cluster-scoped, Namespaces, CRDs, as before waves.
 */
export function deletionBatches(objects: LiveObject[]): LiveObject[][] {
  const waved = objects.filter((o) => !isCrd(o) && !isNamespace(o));
  const batches = groupByWave(waved, liveWave)
    .reverse()
    .flatMap(({ items }) => [items.filter((o) => o.resource.namespaced), items.filter((o) => !o.resource.namespaced)]);
  return [...batches, objects.filter(isNamespace), objects.filter(isCrd)].filter((b) => b.length > 0);
}

import { DRIFT_VALUE_MAX_CHARS, type NewOverride } from '@brokkr/contracts';
import { errorKind } from '../../errors/api-error.ts';
import type { DriftRow } from './sql/drift-row.ts';

export const driftNotKeepable = errorKind(
  422,
  'drift_not_keepable',
  'The hub does not hold this drift’s live values, so it cannot keep them as an override: accept it with scope fields or object',
);

/** A value the agent cut to DRIFT_VALUE_MAX_CHARS of JSON: the hub holds only its start. */
const wasCut = (v: unknown) => typeof v === 'string' && v.length > DRIFT_VALUE_MAX_CHARS && v.endsWith('…');

/** A string a layer would read as a reference to the agent (`{{ agent.… }}`): kept as it is, it would change. */
const looksLikeTemplate = (v: unknown) => JSON.stringify(v ?? null).includes('{{');

/** Why the record's live values cannot become a layer, or undefined when they can. */
function unkeepable(r: DriftRow): string | undefined {
  if (r.missing) return 'the object was deleted: there is no live value to keep';
  if (r.fields.length === 0) return 'the record names no field';
  if (r.fields.some((f) => f.withheld)) return "a Secret's values never leave its cluster";
  if (r.fields.some((f) => wasCut(f.live))) return `a live value is longer than ${DRIFT_VALUE_MAX_CHARS} characters of JSON and was cut`;
  if (r.fields.some((f) => looksLikeTemplate(f.live))) return 'a live value holds "{{", which a layer would read as a template';
  return undefined;
}

/** The layer's name: one per record, so accepting two records of the same object makes two layers. */
export const keepLiveLayerName = (r: Pick<DriftRow, 'id'>) => `drift-${r.id.slice(0, 8)}`;

/**
 * The override layer that keeps a drift's live values on the record's agent: a JSON patch of the
 * object setting each drifted path to its live value (removing it where the live object has none),
 * for that agent only, after every other layer. The agent's render then says what the cluster
 * holds, so it is no drift, and a new deployment object keeps it until the layer is removed.
 * Paths into lists are the live object's indexes, which are the manifest's as long as the object
 * applied keeps its items in order (a patch whose path is not in the render refuses the layer).
 */
export function keepLiveLayer(r: DriftRow): NewOverride {
  const reason = unkeepable(r);
  if (reason) throw driftNotKeepable.with(`Cannot keep drift ${r.id} as an override: ${reason}`);
  const json_patch = r.fields.map((f) =>
    f.live === null ? { op: 'remove' as const, path: f.path } : { op: 'add' as const, path: f.path, value: f.live },
  );
  return {
    name: keepLiveLayerName(r),
    priority: 1_000_000,
    selector: { agent_ids: [r.agent_id] },
    values: null,
    patches: [
      {
        target: { apiVersion: r.api_version, kind: r.kind, name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}) },
        json_patch,
      },
    ],
  };
}

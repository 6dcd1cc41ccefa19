import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';

/** Distinct objects remembered; far more than a fleet's stacks hold at once. */
const MAX_SHARED_ROWS = 100_000;

/**
 * One copy of each deployment object for every cached answer. Each database read returns its own
 * copies (strings, Dates), so 10,000 agents holding the same stacks held 10,000 copies of the same
 * objects: with real manifests of kilobytes, most of the cache's memory. A served object does not
 * change (only `deleted_at` ever does, and a retired object is not served; it is part of the key
 * all the same), so the first copy read stands for all. Beyond the bound the oldest is forgotten:
 * answers that hold it keep it, later reads share a new one.
 */
export class SharedRows {
  private readonly rows = new Map<string, DeploymentObjectRow>();

  constructor(private readonly max: number = MAX_SHARED_ROWS) {}

  share(row: DeploymentObjectRow): DeploymentObjectRow {
    // The checksum too: agents get their own render of an object (migration 0026).
    const key = `${row.id}:${row.yaml_checksum}:${row.deleted_at?.getTime() ?? ''}`;
    const known = this.rows.get(key);
    if (known) return known;
    if (this.rows.size >= this.max) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, row);
    return row;
  }

  get size(): number {
    return this.rows.size;
  }
}

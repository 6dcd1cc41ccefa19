import type { DriftField, DriftState } from '@brokkr/contracts';

/** A drift_records row with its stack's and agent's names, as the reads and the writes return it. */
export interface DriftRow {
  id: string;
  agent_id: string;
  agent_name: string;
  cluster_name: string;
  stack_id: string;
  stack_name: string;
  deployment_object_id: string | null;
  api_version: string;
  kind: string;
  namespace: string | null;
  name: string;
  missing: boolean;
  fields: DriftField[];
  paths: string[];
  managers: (string | null)[];
  state: DriftState;
  first_seen: Date;
  last_seen: Date;
  closed_at: Date | null;
  /** first_seen to the microsecond, as text: the page cursor's half that a JS Date would round. */
  first_seen_key: string;
}

/** The columns of DriftRow, for a query whose drift_records alias is `r` (joined to stacks `s` and agents `a`). */
export const DRIFT_COLUMNS = `r.id, r.agent_id, a.name AS agent_name, a.cluster_name, r.stack_id, s.name AS stack_name,
  r.deployment_object_id, r.api_version, r.kind, r.namespace, r.name, r.missing, r.fields, r.paths, r.managers, r.state,
  r.first_seen, r.last_seen, r.closed_at, r.first_seen::text AS first_seen_key`;

export const DRIFT_JOINS = 'JOIN stacks s ON s.id = r.stack_id JOIN agents a ON a.id = r.agent_id';

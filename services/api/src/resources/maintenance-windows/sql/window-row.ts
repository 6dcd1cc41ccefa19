import type { Bypass, MaintenanceWindow, WindowGate, WindowType } from '@brokkr/contracts';

/** A maintenance_windows row (migration 0030). */
export interface WindowRow {
  id: string;
  name: string;
  type: WindowType;
  rrule: string;
  duration_seconds: number;
  agent_labels: string[];
  stack_ids: string[];
  generator_ids: string[];
  gates: WindowGate[];
  owner_generator_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A maintenance_window_bypasses row. */
export interface BypassRow {
  id: string;
  window_id: string;
  reason: string;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
}

export const WINDOW_COLUMNS =
  'id, name, type, rrule, duration_seconds, agent_labels, stack_ids, generator_ids, gates, owner_generator_id, created_at, updated_at';
export const BYPASS_COLUMNS = 'id, window_id, reason, created_by, created_at, expires_at, ended_at';

/** The fields a window is stored with (its duration already in seconds). */
export interface WindowFields {
  name: string;
  type: WindowType;
  rrule: string;
  duration_seconds: number;
  agent_labels: string[];
  stack_ids: string[];
  generator_ids: string[];
  gates: WindowGate[];
}

export function bypassJson(row: BypassRow): Bypass {
  return {
    ...row,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
  };
}

export function windowJson(row: WindowRow, bypasses: BypassRow[]): MaintenanceWindow {
  return {
    ...row,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    bypasses: bypasses.filter((b) => b.window_id === row.id).map(bypassJson),
  };
}

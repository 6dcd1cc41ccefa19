import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

// Maintenance windows (docs/maintenance-windows.md): when the agents they select may change their
// clusters. The api stores them and serves each agent the ones that select it, inside its grants;
// the agent decides from them, with its own clock, whether a stack may change now.

/** What a window gates: applying a new version, correcting drift, pruning, running work orders. */
export const WINDOW_GATES = ['new_versions', 'drift_correction', 'prune', 'work_orders'] as const;
export const windowGateSchema = z.enum(WINDOW_GATES);
export type WindowGate = z.output<typeof windowGateSchema>;

/** allow: changes only while an occurrence is open; deny: no changes while one is open. */
export const windowTypeSchema = z.enum(['allow', 'deny']);
export type WindowType = z.output<typeof windowTypeSchema>;

/** The longest a window's occurrence, and an emergency bypass, may last. */
export const MAX_WINDOW_SECONDS = 7 * 86_400;
export const MAX_BYPASS_SECONDS = 86_400;

const labels = () => z.array(z.string().min(1).max(256)).max(64);
const ids = () => z.array(uuid()).max(100);

const windowFields = {
  name: z.string().min(1).max(100),
  type: windowTypeSchema,
  rrule: z.string().min(1).max(2000).meta({
    description:
      'RFC 5545: a DTSTART line (with TZID, or UTC with Z) and an RRULE line, e.g. "DTSTART;TZID=Europe/Berlin:20260105T020000\\nRRULE:FREQ=WEEKLY;BYDAY=MO"',
  }),
  duration: z
    .union([z.number().int().min(1).max(MAX_WINDOW_SECONDS), z.string().min(2).max(64)])
    .meta({ description: 'How long each occurrence stays open: seconds, or an ISO 8601 duration (PT2H, P1DT30M, P1W)' }),
  agent_labels: labels().meta({ description: 'Agents carrying every one of these labels; [] selects every agent' }),
  stack_ids: ids().meta({
    description: 'Only these stacks (with generator_ids: a stack listed or of a listed generator); [] and [] = every stack',
  }),
  generator_ids: ids().meta({ description: "Only these generators' stacks" }),
  gates: z.array(windowGateSchema).min(1).max(4).meta({ description: 'What the window gates; default all four' }),
};

export const newMaintenanceWindowSchema = z
  .strictObject({
    ...windowFields,
    agent_labels: windowFields.agent_labels.default([]),
    stack_ids: windowFields.stack_ids.default([]),
    generator_ids: windowFields.generator_ids.default([]),
    gates: windowFields.gates.default([...WINDOW_GATES]),
  })
  .meta({ id: 'NewMaintenanceWindow' });
export type NewMaintenanceWindow = z.output<typeof newMaintenanceWindowSchema>;

export const maintenanceWindowUpdateSchema = z.strictObject(windowFields).partial().meta({ id: 'MaintenanceWindowUpdate' });
export type MaintenanceWindowUpdate = z.output<typeof maintenanceWindowUpdateSchema>;

/** A bypass lifts one window for everyone it selects until it expires (or is ended). */
export const bypassSchema = z
  .object({
    id: uuid(),
    window_id: uuid(),
    reason: z.string(),
    created_by: z.string().meta({ description: "'admin' or the generator's id" }),
    created_at: timestamp(),
    expires_at: timestamp(),
    ended_at: timestamp().nullable(),
  })
  .meta({ id: 'MaintenanceWindowBypass' });
export type Bypass = z.output<typeof bypassSchema>;

export const newBypassSchema = z
  .strictObject({
    reason: z.string().min(1).max(500),
    expires_at: z.iso.datetime({ offset: true }).meta({ description: 'When the bypass ends: in the future, at most 24 h ahead' }),
  })
  .meta({ id: 'NewMaintenanceWindowBypass' });

export const maintenanceWindowSchema = z
  .object({
    id: uuid(),
    name: z.string(),
    type: windowTypeSchema,
    rrule: z.string(),
    duration_seconds: z.number().int(),
    agent_labels: z.array(z.string()),
    stack_ids: z.array(uuid()),
    generator_ids: z.array(uuid()),
    gates: z.array(windowGateSchema),
    owner_generator_id: uuid().nullable().meta({ description: "The generator that made it; null: the admin's" }),
    created_at: timestamp(),
    updated_at: timestamp(),
    bypasses: bypassSchema.array().meta({ description: 'Bypasses not yet expired or ended' }),
  })
  .meta({ id: 'MaintenanceWindow' });
export type MaintenanceWindow = z.output<typeof maintenanceWindowSchema>;

/** One window as an agent is served it (in its grants): what it needs to decide, nothing more. */
export const scheduledWindowSchema = z
  .object({
    id: uuid(),
    name: z.string(),
    type: windowTypeSchema,
    rrule: z.string(),
    duration_seconds: z.number().int(),
    stack_ids: z.array(uuid()),
    generator_ids: z.array(uuid()),
    gates: z.array(windowGateSchema),
    bypassed_until: timestamp()
      .nullable()
      .meta({ description: 'The latest expiry of its bypasses (the agent compares it with its clock)' }),
  })
  .meta({ id: 'ScheduledWindow' });
export type ScheduledWindow = z.output<typeof scheduledWindowSchema>;

export const maintenanceScheduleSchema = z
  .object({ windows: scheduledWindowSchema.array() })
  .meta({ id: 'MaintenanceSchedule', description: 'The windows that select the agent' });
export type MaintenanceSchedule = z.output<typeof maintenanceScheduleSchema>;

import { durationSeconds, ruleRefusal } from '@brokkr/grants';
import { MAX_BYPASS_SECONDS, MAX_WINDOW_SECONDS, type NewMaintenanceWindow } from '@brokkr/contracts';
import { errorKind } from '../../errors/api-error.ts';
import type { WindowFields } from './sql/window-row.ts';

export const invalidWindow = errorKind(422, 'invalid_maintenance_window', 'The maintenance window is not valid');
export const invalidBypass = errorKind(422, 'invalid_bypass', 'The bypass is not valid');

/**
 * The checks zod cannot make: the recurrence must be one the agents can evaluate (the same
 * parser, @brokkr/grants), the duration a real one within a week. Each refusal is 422 with
 * `details.field` naming what is wrong.
 */
export function checkedFields(body: NewMaintenanceWindow, now = Date.now()): WindowFields {
  const refusal = ruleRefusal(body.rrule, now);
  if (refusal) throw invalidWindow.with(`rrule: ${refusal}`, { field: 'rrule', reason: refusal });
  const seconds = durationSeconds(body.duration);
  if (seconds === undefined)
    throw invalidWindow.with('duration: seconds, or an ISO 8601 duration such as PT2H or P1DT30M', { field: 'duration' });
  if (seconds > MAX_WINDOW_SECONDS) throw invalidWindow.with('duration: at most 7 days', { field: 'duration', seconds });
  const { duration: _duration, ...rest } = body;
  return { ...rest, gates: [...new Set(body.gates)], duration_seconds: seconds };
}

/** A bypass must end in the future and within 24 hours: an emergency, not a new schedule. */
export function checkedExpiry(expiresAt: string, now = Date.now()): string {
  const at = Date.parse(expiresAt);
  if (!(at > now)) throw invalidBypass.with('expires_at must be in the future', { field: 'expires_at' });
  if (at - now > MAX_BYPASS_SECONDS * 1000)
    throw invalidBypass.with('expires_at must be at most 24 hours ahead', { field: 'expires_at', max_seconds: MAX_BYPASS_SECONDS });
  return new Date(at).toISOString();
}

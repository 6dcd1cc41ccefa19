import { repeatWhileFull } from '../runner/batches.ts';
import { deleteFinishedDiagnostics } from '../sql/delete-finished-diagnostics.ts';
import { expireUnclaimedDiagnostics } from '../sql/expire-unclaimed-diagnostics.ts';
import { failOverdueDiagnostics } from '../sql/fail-overdue-diagnostics.ts';
import type { MaintenanceTask } from './task.ts';

/**
 * Brokkr's diagnostics task: the expiry sweep, then deletion of finished requests older than
 * DIAGNOSTIC_MAX_AGE_HOURS (0 = as soon as they are finished). Both tunables are read per tick.
 */
export const diagnosticsTask: MaintenanceTask = {
  name: 'diagnostics',
  intervalSeconds: (s) => s.diagnosticCleanupIntervalSeconds,
  async run({ db, settings }) {
    const batch = settings.batchSize;
    const expired = await repeatWhileFull(batch, (limit) => expireUnclaimedDiagnostics(db, limit));
    const failed = await repeatWhileFull(batch, (limit) => failOverdueDiagnostics(db, limit));
    const maxAge = settings.diagnosticMaxAgeHours;
    const deleted = await repeatWhileFull(batch, (limit) => deleteFinishedDiagnostics(db, maxAge, limit));
    return expired + failed + deleted;
  },
};

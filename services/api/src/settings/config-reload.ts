import type { z } from 'zod';
import { diffSettings, hubReloadableSchema, loadLayeredSettings, type ConfigChange } from '@brokkr/config';

const reloadableSchema = hubReloadableSchema;
type Snapshot = z.output<typeof reloadableSchema>;
const KEYS = Object.keys(reloadableSchema.shape) as (keyof Snapshot)[];

/** What a successful reload found: the changes (Brokkr's dotted keys) and the log level now in force. */
export interface ReloadOutcome {
  changes: ConfigChange[];
  logLevel: Snapshot['BROKKR__LOG__LEVEL'];
}

export interface ConfigReloader {
  /** Re-reads the reloadable settings and diffs them against the ones in force; rejects (changing nothing) when they cannot be read. */
  reload(): Promise<ReloadOutcome>;
}

/** Brokkr's precedence: defaults < BROKKR_CONFIG_FILE < environment. */
function readSnapshot(env: NodeJS.ProcessEnv): Promise<Snapshot> {
  return loadLayeredSettings(reloadableSchema, env, env.BROKKR_CONFIG_FILE);
}

/**
 * The baseline `POST /admin/config/reload` compares against: read once when the process starts,
 * replaced by every successful reload. Reloads are serialised so two requests never diff the
 * same baseline. An unreadable file at start counts as absent, so the first good reload reports
 * what it adds.
 */
export function createConfigReloader(env: NodeJS.ProcessEnv = process.env): ConfigReloader {
  let inForce: Promise<Snapshot> = readSnapshot(env).catch(() => readSnapshot({ ...env, BROKKR_CONFIG_FILE: undefined }));
  return {
    reload() {
      const previous = inForce;
      const next = previous.then(async (before) => {
        const after = await readSnapshot(env);
        return { after, changes: diffSettings(KEYS, before, after) };
      });
      inForce = next.then(
        (r) => r.after,
        () => previous,
      );
      return next.then(({ after, changes }) => ({ changes, logLevel: after.BROKKR__LOG__LEVEL }));
    },
  };
}

/**
 * The migration child process (migrate.ts forks it when a migration is pending): receives the
 * options over IPC (the database URL stays out of the command line), applies the migrations and
 * answers `{ applied }` or `{ error }`, then exits, giving back all it loaded (ADR 0026).
 */
import { applyMigrations } from './apply-migrations.ts';
import type { MigrateOptions } from './migrate.ts';

export type ChildReply = { applied: string[] } | { error: { message: string; code?: string } };

process.once('message', (options: MigrateOptions) => {
  const answer = (reply: ChildReply) => process.send?.(reply, () => process.disconnect());
  applyMigrations(options).then(
    (applied) => answer({ applied }),
    (err: unknown) => {
      const { message, code } = err instanceof Error ? (err as Error & { code?: string }) : { message: String(err), code: undefined };
      answer({ error: { message, ...(typeof code === 'string' ? { code } : {}) } });
    },
  );
});

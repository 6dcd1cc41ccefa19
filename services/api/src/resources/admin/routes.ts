import { z } from 'zod';
import { diffSettings, hubReloadableSchema, loadLayeredSettings } from '@brokkr/config';
import { publishCore, SUBJECTS } from '@brokkr/bus';
import type { ConfigReloadNotice } from '@brokkr/contracts';
import { ApiError } from '../../http/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { timestamp } from '../../http/schemas.ts';

const reloadableSchema = hubReloadableSchema;
type Snapshot = z.output<typeof reloadableSchema>;
const KEYS = Object.keys(reloadableSchema.shape) as (keyof Snapshot)[];

/** Brokkr's precedence: defaults < BROKKR_CONFIG_FILE < environment. */
function readSnapshot(env: NodeJS.ProcessEnv = process.env): Promise<Snapshot> {
  return loadLayeredSettings(reloadableSchema, env, env.BROKKR_CONFIG_FILE);
}

const diff = (before: Snapshot, after: Snapshot) => diffSettings(KEYS, before, after);

// What this process considers in force: read when the module loads (process start), replaced by
// every successful reload. Reloads are serialised so two requests never diff the same baseline.
// An unreadable file at start counts as absent, so the first good reload reports what it adds.
let inForce: Promise<Snapshot> = readSnapshot().catch(() => readSnapshot({ ...process.env, BROKKR_CONFIG_FILE: undefined }));

const changeSchema = z.object({ key: z.string(), old_value: z.string(), new_value: z.string() }).meta({ id: 'ConfigChangeInfo' });
const responseSchema = z
  .object({ reloaded_at: timestamp(), changes: changeSchema.array(), success: z.boolean(), message: z.string() })
  .meta({ id: 'ConfigReloadResponse' });

export const adminConfigRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/admin/config/reload',
    summary: 'Re-read the reloadable settings (environment and BROKKR_CONFIG_FILE) and tell every service',
    description:
      'Broadcasts core NATS `brokkr.config.reload`; every hub service re-reads its own sources and applies what it can ' +
      '(log level; maintenance intervals and retentions). CORS changes are reported but need a restart.',
    tags: ['admin'],
    access: 'admin',
    responses: {
      200: { description: 'Reloaded', schema: responseSchema },
      500: { description: 'The configuration could not be read; nothing changed' },
    },
    async handler({ ctx, identity }) {
      const previous = inForce;
      const next = previous.then(async (before) => {
        const after = await readSnapshot();
        return { after, changes: diff(before, after) };
      });
      inForce = next.then((r) => r.after, () => previous);
      let outcome: Awaited<typeof next>;
      try {
        outcome = await next;
      } catch (err) {
        ctx.logger.error({ err }, 'configuration reload failed; nothing changed');
        throw new ApiError(500, 'internal_error', `Failed to reload configuration: ${(err as Error).message}`);
      }
      const { after, changes } = outcome;
      ctx.logger.level = after.BROKKR__LOG__LEVEL;
      const reloadedAt = new Date().toISOString();
      publishCore(ctx.bus.nc, SUBJECTS.configReload, { reloaded_at: reloadedAt, source: 'api', changes } satisfies ConfigReloadNotice);
      await ctx.bus.nc.flush().catch((err: unknown) => ctx.logger.warn({ err }, 'config reload broadcast not confirmed'));
      await ctx.audit({ actor: identity, action: 'config.reloaded', resourceType: 'config', details: { changes } });
      ctx.logger.info({ changes }, `configuration reloaded: ${changes.length} change(s)`);
      const message = changes.length > 0 ? `${changes.length} setting(s) updated` : 'No changes detected';
      return json(200, { reloaded_at: reloadedAt, changes, success: true, message });
    },
  }),
];

import { publishCore, SUBJECTS } from '@brokkr/bus';
import type { ConfigReloadNotice } from '@brokkr/contracts';
import { ApiError } from '../../errors/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import type { ReloadOutcome } from '../../settings/config-reload.ts';
import { configReloadResponseSchema } from './schemas.ts';

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
      200: { description: 'Reloaded', schema: configReloadResponseSchema },
      500: { description: 'The configuration could not be read; nothing changed' },
    },
    async handler({ ctx, identity }) {
      let outcome: ReloadOutcome;
      try {
        outcome = await ctx.configReloader.reload();
      } catch (err) {
        ctx.logger.error({ err }, 'configuration reload failed; nothing changed');
        throw new ApiError(500, 'internal_error', `Failed to reload configuration: ${(err as Error).message}`);
      }
      const { changes, logLevel } = outcome;
      ctx.logger.level = logLevel;
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

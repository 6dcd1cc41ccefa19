import { generatePak, hashPresentedPak } from '@brokkr/pak';
import { errorKind } from '../../errors/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { rotateAdminPakBodySchema, rotateAdminPakResponseSchema } from './schemas.ts';
import { rotateAdminPak } from './sql/rotate-admin-pak.ts';

const currentPakMismatch = errorKind(403, 'current_pak_mismatch', 'current_pak is not the admin PAK');
// Unreachable in practice (an admin caller proves the row exists), declared for completeness.
const adminRoleMissing = errorKind(409, 'admin_role_missing', 'There is no admin PAK to rotate; the hub has not finished its first start');

/**
 * Brokkr sets the admin hash on first start only (and `brokkr-broker rotate admin` on the hub's
 * host). This is the same operation over the API, so an operator never needs a shell next to the
 * database: the old PAK stops working on every replica as soon as the response is sent. The body
 * repeats the current admin PAK so that a request carrying only an Authorization header (a
 * replayed call, a proxy that injects credentials, a fuzzer) cannot lock every admin out.
 */
export const adminRotatePakRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/admin/rotate-pak',
    summary: 'Replace the admin PAK (the old one stops working on every replica at once)',
    description:
      'Mints a new admin PAK, stores only its hash (also on the `admin-generator` when it was linked to the old PAK) and ' +
      "drops the old hash from every api replica's auth cache before answering. `current_pak` must be the admin PAK " +
      'in use. The new PAK is in this response only. Audited as `pak.rotated` (resource type `pak`).',
    tags: ['admin'],
    access: 'admin',
    body: rotateAdminPakBodySchema,
    responses: { 200: { description: 'The new admin PAK (shown once)', schema: rotateAdminPakResponseSchema } },
    errors: [currentPakMismatch, adminRoleMissing],
    async handler({ ctx, identity, body }) {
      const currentHash = hashPresentedPak(body.current_pak);
      if (!currentHash) throw currentPakMismatch();
      const { pak, hash } = generatePak();
      const outcome = await ctx.transact(async (tx) => {
        const result = await rotateAdminPak(tx.client, currentHash, hash);
        if (result === 'rotated') tx.afterCommit(() => ctx.auth.invalidate([currentHash]));
        return result;
      });
      if (outcome === 'current_pak_mismatch') throw currentPakMismatch();
      if (outcome === 'no_admin_role') throw adminRoleMissing();
      // This replica's gauge; the others correct theirs on their next start.
      ctx.metrics.defaultAdminPakInUse.set(0);
      await ctx.audit({ actor: identity, action: 'pak.rotated', resourceType: 'pak', details: { name: 'admin', via: 'api' } });
      ctx.logger.info('admin PAK rotated');
      return json(200, { pak, rotated_at: new Date().toISOString() });
    },
  }),
];

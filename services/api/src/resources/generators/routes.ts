import type { Queryable } from '@brokkr/db';
import { generatePak } from '@brokkr/pak';
import { requireAdminOrGenerator } from '../../auth/guards.ts';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { generatorNotFound } from '../../errors/catalogue.ts';
import { uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { publishStackInvalidation } from '../../events/stack-invalidation.ts';
import { generatorSchema, generatorUpdateSchema, generatorWithPakSchema, newGeneratorSchema } from './schemas.ts';
import { insertGenerator } from './sql/create-generator.ts';
import { softDeleteGenerator } from './sql/delete-generator.ts';
import { agentsAffectedByGenerator, findLiveGenerator, listTenantGenerators } from './sql/queries.ts';
import { rotateGeneratorPak } from './sql/rotate-generator-pak.ts';
import { updateGenerator, type GeneratorUpdate } from './sql/update-generator.ts';

const tags = ['generators'];
// Brokkr's update answers a missing generator with the generic diesel NotFound code.
const updateNotFound = errorKind(404, 'not_found', 'Generator not found');
const cannotDeleteSystem = errorKind(403, 'cannot_delete_system_generator', 'The system generator cannot be deleted');
const activeChangeForbidden = errorKind(403, 'is_active_change_forbidden', 'Only an admin can activate or deactivate a generator');

/**
 * Only an admin changes is_active (docs/security.md, "Deactivation"); the generator may send its
 * current value back.
 */
const writeUpdate = raising(async (db: Queryable, identity: Identity, id: string, update: GeneratorUpdate) => {
  const result = await updateGenerator(db, id, update, identity.admin ? undefined : update.is_active);
  if (!result && !identity.admin && (await findLiveGenerator(db, id))) throw activeChangeForbidden({ is_active: update.is_active });
  return result;
}, activeChangeForbidden);

export const generatorRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/generators',
    summary: 'List generators (the system generator is hidden)',
    tags,
    access: 'admin',
    responses: { 200: { description: 'Generators', schema: generatorSchema.array() } },
    handler: async ({ ctx }) => json(200, await listTenantGenerators(ctx.db.pool)),
  }),

  defineRoute({
    method: 'post',
    path: '/generators',
    summary: 'Create a generator and its PAK',
    tags,
    access: 'admin',
    body: newGeneratorSchema,
    responses: { 201: { description: 'The generator and its PAK (shown once)', schema: generatorWithPakSchema } },
    errors: [uniqueViolation],
    async handler({ body, identity, ctx }) {
      const { pak, hash } = generatePak();
      const generator = await ctx.transact(({ client }) =>
        insertGenerator(client, { name: body.name, description: body.description ?? null, pakHash: hash }),
      );
      const name = generator.name;
      await ctx.audit({
        actor: identity,
        action: 'generator.created',
        resourceType: 'generator',
        resourceId: generator.id,
        details: { name },
      });
      await ctx.audit({
        actor: identity,
        action: 'pak.created',
        resourceType: 'pak',
        resourceId: generator.id,
        details: { entity: 'generator', name },
      });
      return json(201, { generator, pak });
    },
  }),

  defineRoute({
    method: 'get',
    path: '/generators/:id',
    summary: 'Get a generator',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The generator', schema: generatorSchema } },
    errors: [requireAdminOrGenerator, generatorNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      const generator = await findLiveGenerator(ctx.db.pool, params.id);
      if (!generator) throw generatorNotFound();
      return json(200, generator);
    },
  }),

  defineRoute({
    method: 'put',
    path: '/generators/:id',
    summary: 'Update a generator (full object; name, description, is_active, last_active_at are written)',
    description:
      'Only an admin may change `is_active`; a generator sends its current value back. A generator with ' +
      '`is_active: false` fails authentication (401) until an admin reactivates it.',
    tags,
    access: 'any',
    params: idParams,
    body: generatorUpdateSchema,
    responses: { 200: { description: 'The updated generator', schema: generatorSchema } },
    errors: [requireAdminOrGenerator, writeUpdate, updateNotFound, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      const generator = await ctx.transact(async (tx) => {
        const result = await writeUpdate(tx.client, identity, params.id, {
          name: body.name,
          description: body.description ?? null,
          is_active: body.is_active,
          last_active_at: body.last_active_at ?? null,
        });
        // An admin may have flipped is_active: what every replica remembers of this PAK (its identity,
        // or that it matched nobody) goes, so deactivation (auth/sql/resolve-pak.ts) and reactivation apply at once.
        const pakHash = result?.pakHash;
        if (pakHash && identity.admin) tx.afterCommit(() => ctx.auth.invalidate([pakHash]));
        return result?.generator;
      });
      if (!generator) throw updateNotFound();
      await ctx.audit({
        actor: identity,
        action: 'generator.updated',
        resourceType: 'generator',
        resourceId: generator.id,
        details: { name: generator.name },
      });
      return json(200, generator);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/generators/:id',
    summary: 'Delete a generator (its stacks, objects and templates follow)',
    tags,
    access: 'any',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [requireAdminOrGenerator, generatorNotFound, cannotDeleteSystem],
    async handler({ params, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      await ctx.transact(async (tx) => {
        const generator = await findLiveGenerator(tx.client, params.id);
        if (!generator) throw generatorNotFound();
        if (generator.is_system) throw cannotDeleteSystem();
        tx.notifyAgents(await agentsAffectedByGenerator(tx.client, params.id));
        const deleted = await softDeleteGenerator(tx.client, params.id);
        if (!deleted) throw generatorNotFound();
        const oldHash = deleted.pak_hash;
        if (oldHash) tx.afterCommit(() => ctx.auth.invalidate([oldHash]));
        // Its stacks were deleted with it (a trigger, no stack.deleted events): admins' live sockets on them close too.
        tx.afterCommit(() => publishStackInvalidation(ctx.bus.nc, { all: true }, ctx.logger));
      });
      await ctx.audit({ actor: identity, action: 'generator.deleted', resourceType: 'generator', resourceId: params.id });
      return noContent();
    },
  }),

  defineRoute({
    method: 'post',
    path: '/generators/:id/rotate-pak',
    summary: "Replace a generator's PAK (the old one stops working on every replica at once)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 201: { description: 'The generator and its new PAK', schema: generatorWithPakSchema } },
    errors: [requireAdminOrGenerator, generatorNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrGenerator(identity, params.id);
      const { pak, hash } = generatePak();
      const rotated = await ctx.transact(async (tx) => {
        const result = await rotateGeneratorPak(tx.client, params.id, hash);
        const oldHash = result?.oldHash;
        if (oldHash) tx.afterCommit(() => ctx.auth.invalidate([oldHash]));
        return result;
      });
      if (!rotated) throw generatorNotFound();
      const { generator } = rotated;
      await ctx.audit({
        actor: identity,
        action: 'pak.rotated',
        resourceType: 'generator',
        resourceId: generator.id,
        details: { generator_name: generator.name },
      });
      return json(201, { generator, pak });
    },
  }),
];

import { z } from 'zod';
import type { Queryable } from '@brokkr/db';
import type { Identity } from '../auth/identity.ts';
import type { Raises } from '../errors/api-error.ts';
import type { TxScope } from '../events/transact.ts';
import type { AlsoMatching } from '../domain/agents-for-stacks.ts';
import type { LabelOwner } from '../domain/labels/owners.ts';
import { insertAnnotation } from '../domain/labels/sql/add-annotation.ts';
import { insertLabel } from '../domain/labels/sql/add-label.ts';
import { listAnnotations, listLabels } from '../domain/labels/sql/queries.ts';
import { deleteAnnotation } from '../domain/labels/sql/remove-annotation.ts';
import { deleteLabel } from '../domain/labels/sql/remove-label.ts';
import { requireValidAnnotation, requireValidLabel } from '../domain/labels/validity.ts';
import { uniqueViolation } from './db-errors.ts';
import { defineRoute, json, noContent, type Access, type AnyRoute } from './route.ts';
import { idParams, uuid } from './schemas.ts';

/** Who may read an owner's labels: throws its 403/404. */
type ReadGuard = ((db: Queryable, identity: Identity, ownerId: string) => unknown) & Raises;
/** Who may change them: throws its 403/404, and with the transaction's client locks the owner so it stays live until commit. */
type ModifyGuard = ((db: Queryable, identity: Identity, ownerId: string, lock: 'share') => unknown) & Raises;

/** How one kind of request body names a label or an annotation (and checks an owner id it repeats). */
interface BodyShape<B extends z.ZodType, T> {
  schema: B;
  read(body: z.output<B>, ownerId: string): T;
  /** What `read` raises (a body id that differs from the path's). */
  errors: readonly Raises[];
}

/** What differs between agents, stacks and template versions; everything else is the same six routes. */
export interface LabelRoutesSpec<LB extends z.ZodType, AB extends z.ZodType> {
  owner: LabelOwner;
  tags: string[];
  /** 'admin': only an admin changes them (agents); 'any': `modify` decides. */
  writeAccess: Access;
  read: ReadGuard;
  /** Runs first in a change's transaction. Absent: `writeAccess` is the whole rule. */
  modify?: ModifyGuard;
  label: BodyShape<LB, string> & { row: z.ZodType };
  annotation: BodyShape<AB, { key: string; value: string }> & { row: z.ZodType };
  /** Errors an insert can hit besides a duplicate (agents: an unknown agent is a foreign-key violation). */
  insertErrors?: readonly Raises[];
  /**
   * Queues the wake-ups of the agents whose target state the change alters; `removed` is what a
   * removal took away, still counted when finding them. Absent: no one's target state depends on it.
   */
  wake?(tx: TxScope, ownerId: string, removed: AlsoMatching): Promise<void> | void;
  /** Runs in a label add's transaction once the label is in, before `wake`; may refuse it (its errors go in `label.errors`). */
  labelAdded?(tx: TxScope, ownerId: string, label: string): Promise<void>;
}

const labelParams = z.object({ id: uuid(), label: z.string() });
const annotationParams = z.object({ id: uuid(), key: z.string() });

/**
 * GET/POST `/<owner>s/{id}/labels`, DELETE `…/labels/{label}`, and the same for annotations: one
 * order for every owner (access, the body's owner id, the tag rule of domain/labels/validity.ts,
 * then the write and its wake-ups in one transaction; a missing one is a 404 and wakes no one).
 */
export function labelRoutes<LB extends z.ZodType, AB extends z.ZodType>(spec: LabelRoutesSpec<LB, AB>): AnyRoute[] {
  return [...labelsOnly(spec), ...annotationsOnly(spec)];
}

/** What the write routes of both halves share. */
function writing<LB extends z.ZodType, AB extends z.ZodType>(spec: LabelRoutesSpec<LB, AB>) {
  return {
    base: `/${spec.owner.kind}s/:id`,
    guard: spec.modify ? [spec.modify] : [],
    insertErrors: [uniqueViolation, ...(spec.insertErrors ?? [])],
    wake: (tx: TxScope, ownerId: string, removed: AlsoMatching = {}) => spec.wake?.(tx, ownerId, removed),
  };
}

function labelsOnly<LB extends z.ZodType, AB extends z.ZodType>(spec: LabelRoutesSpec<LB, AB>): AnyRoute[] {
  const { owner, tags, writeAccess, read, modify, label } = spec;
  const { base, guard, insertErrors, wake } = writing(spec);
  return [
    defineRoute({
      method: 'get',
      path: `${base}/labels`,
      summary: `List a ${owner.kind}'s labels`,
      tags,
      access: 'any',
      params: idParams,
      responses: { 200: { description: 'Labels', schema: label.row.array() } },
      errors: [read],
      async handler({ params, identity, ctx }) {
        await read(ctx.db.pool, identity, params.id);
        return json(200, await listLabels(ctx.db.pool, owner, params.id));
      },
    }),

    defineRoute({
      method: 'post',
      path: `${base}/labels`,
      summary: `Add a label to a ${owner.kind}`,
      tags,
      access: writeAccess,
      params: idParams,
      body: label.schema,
      responses: { 201: { description: 'The label', schema: label.row } },
      errors: [...guard, ...label.errors, requireValidLabel, ...insertErrors],
      async handler({ params, body, identity, ctx }) {
        const row = await ctx.transact(async (tx) => {
          await modify?.(tx.client, identity, params.id, 'share');
          const text = label.read(body, params.id);
          requireValidLabel(text);
          const added = await insertLabel(tx.client, owner, params.id, text);
          await spec.labelAdded?.(tx, params.id, text);
          await wake(tx, params.id);
          return added;
        });
        return json(201, row);
      },
    }),

    defineRoute({
      method: 'delete',
      path: `${base}/labels/:label`,
      summary: `Remove a label from a ${owner.kind}`,
      tags,
      access: writeAccess,
      params: labelParams,
      responses: { 204: { description: 'Removed' } },
      errors: [...guard, owner.labelNotFound],
      async handler({ params, identity, ctx }) {
        await ctx.transact(async (tx) => {
          await modify?.(tx.client, identity, params.id, 'share');
          if (!(await deleteLabel(tx.client, owner, params.id, params.label))) throw owner.labelNotFound();
          await wake(tx, params.id, { labels: [params.label] });
        });
        return noContent();
      },
    }),
  ];
}

function annotationsOnly<LB extends z.ZodType, AB extends z.ZodType>(spec: LabelRoutesSpec<LB, AB>): AnyRoute[] {
  const { owner, tags, writeAccess, read, modify, annotation } = spec;
  const { base, guard, insertErrors, wake } = writing(spec);
  return [
    defineRoute({
      method: 'get',
      path: `${base}/annotations`,
      summary: `List a ${owner.kind}'s annotations`,
      tags,
      access: 'any',
      params: idParams,
      responses: { 200: { description: 'Annotations', schema: annotation.row.array() } },
      errors: [read],
      async handler({ params, identity, ctx }) {
        await read(ctx.db.pool, identity, params.id);
        return json(200, await listAnnotations(ctx.db.pool, owner, params.id));
      },
    }),

    defineRoute({
      method: 'post',
      path: `${base}/annotations`,
      summary: `Add an annotation to a ${owner.kind} (one value per key)`,
      tags,
      access: writeAccess,
      params: idParams,
      body: annotation.schema,
      responses: { 201: { description: 'The annotation', schema: annotation.row } },
      errors: [...guard, ...annotation.errors, requireValidAnnotation, ...insertErrors],
      async handler({ params, body, identity, ctx }) {
        const row = await ctx.transact(async (tx) => {
          await modify?.(tx.client, identity, params.id, 'share');
          const { key, value } = annotation.read(body, params.id);
          requireValidAnnotation(key, value);
          const added = await insertAnnotation(tx.client, owner, params.id, { key, value });
          await wake(tx, params.id);
          return added;
        });
        return json(201, row);
      },
    }),

    defineRoute({
      method: 'delete',
      path: `${base}/annotations/:key`,
      summary: `Remove an annotation from a ${owner.kind}`,
      tags,
      access: writeAccess,
      params: annotationParams,
      responses: { 204: { description: 'Removed' } },
      errors: [...guard, owner.annotationNotFound],
      async handler({ params, identity, ctx }) {
        await ctx.transact(async (tx) => {
          await modify?.(tx.client, identity, params.id, 'share');
          const value = await deleteAnnotation(tx.client, owner, params.id, params.key);
          if (value === undefined) throw owner.annotationNotFound();
          await wake(tx, params.id, { annotations: [[params.key, value]] });
        });
        return noContent();
      },
    }),
  ];
}

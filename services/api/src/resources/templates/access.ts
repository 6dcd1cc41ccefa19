import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { findLiveTemplate } from './sql/queries.ts';
import type { TemplateRow } from './sql/template-row.ts';

export const templateNotFound = errorKind(404, 'template_not_found', 'Template not found');
const templateNotAccessible = errorKind(403, 'template_not_accessible', 'Access denied to this template');
const templateNotOwned = errorKind(403, 'template_not_owned', 'Only an admin or the generator owning this template may change it');
export const templatesNotAccessible = errorKind(403, 'templates_not_accessible', 'Templates are for admins and generators');

/** Admin and generators; agents get 403 `templates_not_accessible` (listing and creating). */
export const requireTemplateUser = raising((identity: Identity): void => {
  if (!identity.admin && identity.generator === null) throw templatesNotAccessible();
}, templatesNotAccessible);

/** Read access: an admin; a generator for its own templates and for system templates (generator_id null). */
export function canReadTemplate(identity: Identity, template: TemplateRow): boolean {
  if (identity.admin) return true;
  return identity.generator !== null && (template.generator_id === null || template.generator_id === identity.generator);
}

/**
 * A live template version the caller may read: 404 `template_not_found`, then 403
 * `template_not_accessible`. Inside a transaction, `lock` keeps it live until commit.
 */
export const fetchReadableTemplate = raising(
  async (db: Queryable, identity: Identity, id: string, lock?: 'share'): Promise<TemplateRow> => {
    const template = await findLiveTemplate(db, id, lock);
    if (!template) throw templateNotFound();
    if (!canReadTemplate(identity, template)) throw templateNotAccessible();
    return template;
  },
  templateNotFound,
  templateNotAccessible,
);

/**
 * A live template version the caller may change: an admin, or the generator owning it (a
 * generator cannot change a system template). 404 `template_not_found`, then 403 `template_not_owned`.
 */
export const fetchModifiableTemplate = raising(
  async (db: Queryable, identity: Identity, id: string, lock?: 'share'): Promise<TemplateRow> => {
    const template = await findLiveTemplate(db, id, lock);
    if (!template) throw templateNotFound();
    const owner = identity.generator !== null && template.generator_id === identity.generator;
    if (!identity.admin && !owner) throw templateNotOwned();
    return template;
  },
  templateNotFound,
  templateNotOwned,
);

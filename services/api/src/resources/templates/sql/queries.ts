import type { Queryable } from '@brokkr/db';
import type { ListWindow } from '../../../domain/list-window.ts';
import { TEMPLATE_COLUMNS, type TemplateRow } from './template-row.ts';

/** The read-only statements of templates (their labels and annotations: domain/labels/), the template-to-stack rule. */

/** A live template version; `share` keeps it live until the caller's transaction ends. */
export async function findLiveTemplate(db: Queryable, id: string, lock?: 'share'): Promise<TemplateRow | undefined> {
  const { rows } = await db.query<TemplateRow>(
    `SELECT ${TEMPLATE_COLUMNS} FROM stack_templates WHERE id = $1 AND deleted_at IS NULL${lock === 'share' ? ' FOR SHARE' : ''}`,
    [id],
  );
  return rows[0];
}

/**
 * Every live version (admin), or the system templates plus one generator's own. Brokkr returns
 * them unordered; here by name, owner, then version.
 */
export async function listLiveTemplates(db: Queryable, generatorId: string | null, window: ListWindow): Promise<TemplateRow[]> {
  const { rows } = await db.query<TemplateRow>(
    `SELECT ${TEMPLATE_COLUMNS} FROM stack_templates
      WHERE deleted_at IS NULL AND ($1::uuid IS NULL OR generator_id IS NULL OR generator_id = $1)
      ORDER BY name, generator_id NULLS FIRST, version, id LIMIT $2 OFFSET $3`,
    [generatorId, window.limit, window.offset],
  );
  return rows;
}

export interface StackMismatch {
  missing_labels: string[];
  /** `[key, value]` pairs, as Brokkr lists them. */
  missing_annotations: [string, string][];
}

/**
 * The template-to-stack rule (AND): every label of the template must be a label of the stack,
 * and every (key, value) annotation of the template an annotation of the stack. Returns what
 * the stack lacks (both empty: it matches).
 */
export async function templateStackMismatch(db: Queryable, templateId: string, stackId: string): Promise<StackMismatch> {
  const { rows } = await db.query<{ missing_labels: string[]; missing_annotations: [string, string][] }>(
    `SELECT
       ARRAY(SELECT tl.label FROM template_labels tl
              WHERE tl.template_id = $1
                AND NOT EXISTS (SELECT 1 FROM stack_labels sl WHERE sl.stack_id = $2 AND sl.label = tl.label)
              ORDER BY tl.label) AS missing_labels,
       COALESCE((SELECT json_agg(json_build_array(ta.key, ta.value) ORDER BY ta.key) FROM template_annotations ta
              WHERE ta.template_id = $1
                AND NOT EXISTS (SELECT 1 FROM stack_annotations sa
                                 WHERE sa.stack_id = $2 AND sa.key = ta.key AND sa.value = ta.value)), '[]'::json)
         AS missing_annotations`,
    [templateId, stackId],
  );
  return rows[0]!;
}

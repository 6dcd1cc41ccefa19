import type { Queryable } from '@brokkr/db';
import type { TemplateLabelRow } from './template-row.ts';

/** A duplicate is a unique violation (409). */
export async function insertTemplateLabel(db: Queryable, templateId: string, label: string): Promise<TemplateLabelRow> {
  const { rows } = await db.query<TemplateLabelRow>(
    'INSERT INTO template_labels (template_id, label) VALUES ($1, $2) RETURNING id, template_id, label, created_at',
    [templateId, label],
  );
  return rows[0]!;
}

import type { Queryable } from '@brokkr/db';
import type { TemplateAnnotationRow } from './template-row.ts';

/** One value per key: a second one for the same key is a unique violation (409). */
export async function insertTemplateAnnotation(
  db: Queryable,
  templateId: string,
  key: string,
  value: string,
): Promise<TemplateAnnotationRow> {
  const { rows } = await db.query<TemplateAnnotationRow>(
    'INSERT INTO template_annotations (template_id, key, value) VALUES ($1, $2, $3) RETURNING id, template_id, key, value, created_at',
    [templateId, key, value],
  );
  return rows[0]!;
}

import type { Queryable } from '@brokkr/db';

/** False when the template has no annotation with that key. */
export async function deleteTemplateAnnotation(db: Queryable, templateId: string, key: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM template_annotations WHERE template_id = $1 AND key = $2', [templateId, key]);
  return rowCount === 1;
}

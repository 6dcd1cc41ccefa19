import type { Queryable } from '@brokkr/db';

/** False when the template has no such label. */
export async function deleteTemplateLabel(db: Queryable, templateId: string, label: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM template_labels WHERE template_id = $1 AND label = $2', [templateId, label]);
  return rowCount === 1;
}

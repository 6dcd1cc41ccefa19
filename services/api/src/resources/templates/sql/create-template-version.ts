import { createHash } from 'node:crypto';
import type { Queryable } from '@brokkr/db';
import { TEMPLATE_COLUMNS, type TemplateRow } from './template-row.ts';

export interface NewTemplateVersion {
  generatorId: string | null;
  name: string;
  description: string | null;
  templateContent: string;
  parametersSchema: string;
}

/**
 * The next version of (owner, name): 1 + the highest live version (so reusing a name, or a PUT,
 * adds a version rather than failing). A transaction-scoped advisory lock on (owner, name)
 * makes concurrent creates take turns instead of colliding on unique_template_version.
 * Run inside a transaction.
 */
export async function insertTemplateVersion(db: Queryable, t: NewTemplateVersion): Promise<TemplateRow> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('stack_templates:' || COALESCE($1::text, '') || ':' || $2::text, 0))`, [
    t.generatorId,
    t.name,
  ]);
  const checksum = createHash('sha256').update(t.templateContent, 'utf8').digest('hex');
  const { rows } = await db.query<TemplateRow>(
    `INSERT INTO stack_templates (generator_id, name, description, version, template_content, parameters_schema, checksum)
     SELECT $1::uuid, $2::varchar, $3, COALESCE(MAX(version), 0) + 1, $4, $5, $6
       FROM stack_templates
      WHERE generator_id IS NOT DISTINCT FROM $1::uuid AND name = $2::varchar AND deleted_at IS NULL
     RETURNING ${TEMPLATE_COLUMNS}`,
    [t.generatorId, t.name, t.description, t.templateContent, t.parametersSchema, checksum],
  );
  return rows[0]!;
}

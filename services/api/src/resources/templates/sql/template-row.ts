/** A stack_templates row as the API returns it. */
export interface TemplateRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  generator_id: string | null;
  name: string;
  description: string | null;
  version: number;
  template_content: string;
  parameters_schema: string;
  checksum: string;
}

export const TEMPLATE_COLUMNS =
  'id, created_at, updated_at, deleted_at, generator_id, name, description, version, template_content, parameters_schema, checksum';

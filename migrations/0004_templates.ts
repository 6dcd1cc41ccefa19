import type { Knex } from 'knex';

// Stack templates (generator_id NULL = system template), their labels/annotations, the unused
// template_targets table (kept for schema parity: v1 never writes it) and render provenance.

// Trigger functions below pin the search path they were created under (SET search_path FROM
// CURRENT), so a trigger always writes to its own tenant's tables whatever the firing session's
// search path is. Pin the concrete schema rather than "$user": a later schema named after the
// database user must not capture the public tenant's triggers. SET LOCAL: knex runs the
// migrations inside a transaction.
const pinSearchPath = `SELECT set_config('search_path', quote_ident(current_schema()) || ', public', true)`;

const templates = `
-- NULLS NOT DISTINCT: two live system templates (generator_id NULL) with the same name and
-- version collide, as they do in v1.
CREATE TABLE stack_templates (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  deleted_at timestamptz,
  generator_id uuid REFERENCES generators (id) ON DELETE CASCADE,
  name varchar(255) NOT NULL,
  description text,
  version integer NOT NULL DEFAULT 1,
  template_content text NOT NULL,
  parameters_schema text NOT NULL,
  checksum varchar(64) NOT NULL
);
CREATE UNIQUE INDEX unique_template_version ON stack_templates (generator_id, name, version)
  NULLS NOT DISTINCT WHERE deleted_at IS NULL;
CREATE INDEX idx_stack_templates_generator_id ON stack_templates (generator_id) WHERE deleted_at IS NULL;
CREATE INDEX idx_stack_templates_name ON stack_templates (name) WHERE deleted_at IS NULL;
CREATE INDEX idx_stack_templates_deleted_at ON stack_templates (deleted_at);
CREATE TRIGGER update_stack_templates_timestamp BEFORE UPDATE ON stack_templates
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE TABLE template_labels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  template_id uuid NOT NULL REFERENCES stack_templates (id) ON DELETE CASCADE,
  label varchar(64) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (template_id, label)
);
CREATE INDEX idx_template_labels_template_id ON template_labels (template_id);
CREATE INDEX idx_template_labels_label ON template_labels (label);

CREATE TABLE template_annotations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  template_id uuid NOT NULL REFERENCES stack_templates (id) ON DELETE CASCADE,
  key varchar(64) NOT NULL,
  value varchar(64) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (template_id, key)
);
CREATE INDEX idx_template_annotations_template_id ON template_annotations (template_id);
CREATE INDEX idx_template_annotations_key ON template_annotations (key);

CREATE TABLE template_targets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  template_id uuid NOT NULL REFERENCES stack_templates (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (template_id, stack_id)
);
CREATE INDEX idx_template_targets_template_id ON template_targets (template_id);
CREATE INDEX idx_template_targets_stack_id ON template_targets (stack_id);

-- template_id has no ON DELETE: provenance blocks hard-deleting a template that was rendered.
CREATE TABLE rendered_deployment_objects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  deployment_object_id uuid NOT NULL UNIQUE REFERENCES deployment_objects (id) ON DELETE CASCADE,
  template_id uuid NOT NULL REFERENCES stack_templates (id),
  template_version integer NOT NULL,
  template_parameters text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX idx_rendered_deployment_objects_template ON rendered_deployment_objects (template_id, template_version);
CREATE INDEX idx_rendered_deployment_objects_deployment_object_id ON rendered_deployment_objects (deployment_object_id);
`;

const triggers = `
CREATE FUNCTION cascade_soft_delete_generator_templates() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE stack_templates SET deleted_at = NEW.deleted_at
   WHERE generator_id = NEW.id AND deleted_at IS NULL;
  RETURN NEW;
END;
$$;
CREATE TRIGGER trigger_cascade_soft_delete_generator_templates AFTER UPDATE OF deleted_at ON generators
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
  EXECUTE FUNCTION cascade_soft_delete_generator_templates();

CREATE FUNCTION handle_stack_template_hard_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM template_labels WHERE template_id = OLD.id;
  DELETE FROM template_annotations WHERE template_id = OLD.id;
  DELETE FROM template_targets WHERE template_id = OLD.id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER trigger_stack_template_hard_delete BEFORE DELETE ON stack_templates
  FOR EACH ROW EXECUTE FUNCTION handle_stack_template_hard_delete();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(pinSearchPath);
  await knex.raw(templates);
  await knex.raw(triggers);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

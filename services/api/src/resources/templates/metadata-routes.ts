import { newTemplateAnnotationSchema, newTemplateLabelSchema, templateAnnotationSchema, templateLabelSchema } from '@brokkr/contracts';
import { labelRoutes } from '../../http/label-routes.ts';
import { labelOwners } from '../../domain/labels/owners.ts';
import { fetchModifiableTemplate, fetchReadableTemplate } from './access.ts';

/**
 * A template version's labels and annotations: the stacks it may be instantiated into must
 * carry all of them (AND). They belong to one version: a PUT starts the next one without any.
 * No agent's target state depends on them, so a change wakes no one.
 */
export const templateMetadataRoutes = labelRoutes({
  owner: labelOwners.template,
  tags: ['templates'],
  writeAccess: 'any',
  read: fetchReadableTemplate,
  modify: fetchModifiableTemplate,
  label: { schema: newTemplateLabelSchema, row: templateLabelSchema, read: (body) => body, errors: [] },
  annotation: { schema: newTemplateAnnotationSchema, row: templateAnnotationSchema, read: (body) => body, errors: [] },
});

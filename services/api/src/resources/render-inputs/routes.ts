import { renderInputsSchema } from '@brokkr/contracts';
import { z } from 'zod';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { errorKind } from '../../errors/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { uuid } from '../../http/schemas.ts';
import { agentViews } from '../../rendering/sql/agents.ts';
import type { Queryable } from '@brokkr/db';
import type { RenderInputs } from '@brokkr/contracts';
import { plainInputsOf, renderInputsOf, templateInputsOf } from './inputs.ts';
import { servedPlainObject, servedRenderedObject, servedTemplateObject } from './sql/render-inputs.ts';

const renderInputsNotFound = errorKind(
  404,
  'render_inputs_not_found',
  'No chart, overlay, template-made object or plain YAML under override layers of that id is served to this agent',
);

/**
 * A chart or an overlay (rendered_objects with a source), else an object made from a template (its
 * provenance row), else plain YAML in a stack with override layers.
 */
async function servedInputs(db: Queryable, agentId: string, objectId: string): Promise<RenderInputs | undefined> {
  const [rendered, fromTemplate] = await Promise.all([
    servedRenderedObject(db, agentId, objectId),
    servedTemplateObject(db, agentId, objectId),
  ]);
  const plain = rendered || fromTemplate ? undefined : await servedPlainObject(db, agentId, objectId);
  if (!rendered && !fromTemplate && !plain) return undefined;
  const [agent] = await agentViews(db, [agentId]);
  if (!agent) return undefined;
  if (rendered) return renderInputsOf(db, rendered, agent);
  if (fromTemplate) return templateInputsOf(db, fromTemplate, agent);
  return plainInputsOf(db, plain!, agent);
}

/**
 * For an agent that requires signatures and renders charts, overlays and templates (and applies
 * override layers) itself from the inputs a generator signed (docs/signatures.md): the hub relays the inputs and the
 * signature naming them, and is not trusted with either; the agent checks each digest.
 */
export const renderInputsRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/render-inputs/:deployment_object_id',
    summary:
      'What a chart, an overlay, a template-made object or plain YAML under override layers the agent is served is made from, and the signature naming those inputs',
    description:
      'Only for a chart, an overlay, a deployment object instantiated from a template, or plain YAML in a stack with override ' +
      'layers, in the agent’s own target state (404 otherwise, and for plain YAML in a stack without layers). The source archive ' +
      'exactly as pinned, the values, the render options (a template: the template version’s text and parameters schema, and the ' +
      'parameters; plain YAML: `content`), every override layer of the stack in its signed form, the Capabilities the hub renders ' +
      'it with for this agent, and the newest signature of the stack whose statement names these inputs. `not_signable` is null: ' +
      'the agent resolves layers, `{{ agent.* }}` references and its cluster’s facts itself.',
    tags: ['agents', 'signatures'],
    access: 'any',
    params: z.object({ id: uuid(), deployment_object_id: uuid() }),
    responses: { 200: { description: 'The render inputs', schema: renderInputsSchema } },
    errors: [requireAdminOrSelf, renderInputsNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      const agentId = params.id.toLowerCase();
      const inputs = await servedInputs(ctx.db.pool, agentId, params.deployment_object_id.toLowerCase());
      if (!inputs) throw renderInputsNotFound();
      return json(200, inputs);
    },
  }),
];

import { errorKind } from './api-error.ts';

/**
 * The wire errors that more than one place of src/ raises, each defined once.
 *
 * The rule: every code is defined by exactly one `errorKind` in src/ (test/error-catalogue.unit.test.ts
 * fails otherwise). A code that more than one resource raises (console/ and domain/ count as one
 * each) lives here, with a general message; a call site that has more to say uses
 * `.with(message, details)`. A code that one resource alone raises is defined in that resource
 * (its access.ts or the routes that raise it) or beside the domain/ rule it belongs to; the codes
 * of the request plumbing (http/, auth/, limits/) stay with the plumbing that raises them.
 */

// Lookups of what the resources refer to each other by.
export const agentNotFound = errorKind(404, 'agent_not_found', 'Agent not found');
export const generatorNotFound = errorKind(404, 'generator_not_found', 'Generator not found');
export const stackNotFound = errorKind(404, 'stack_not_found', 'Stack not found');
export const deploymentObjectNotFound = errorKind(404, 'deployment_object_not_found', 'Deployment object not found');
export const webhookNotFound = errorKind(404, 'webhook_not_found', 'Webhook subscription not found');

// Who may act on them.
export const agentPakMismatch = errorKind(403, 'agent_pak_mismatch', 'PAK does not match the agent');
export const generatorRequired = errorKind(403, 'generator_required', 'Only an admin or a generator may do this');
export const systemGeneratorNotATenant = errorKind(403, 'system_generator_not_a_tenant', 'The system generator is not a tenant');
export const stackNotOwned = errorKind(403, 'stack_not_owned', 'Access denied to this stack');
/** A stack dependency, or a stack label bringing a stack into a dependency selector, would close a cycle. */
export const dependencyCycle = errorKind(422, 'dependency_cycle', 'The dependency would close a cycle');
export const generatorNotAssociated = errorKind(403, 'generator_not_associated', 'Generator is not associated with this deployment object');

// What a deployment object must be, however it is made (uploaded, or rendered from a template).
export const invalidDeploymentObject = errorKind(400, 'invalid_deployment_object', 'Invalid deployment object');

// Per-cluster content: a write rendered with a stack's override layers that changed meanwhile (it retried, and they changed again).
export const stackLayersChanged = errorKind(
  409,
  'stack_layers_changed',
  "The stack's override layers or its newest object kept changing while this write was rendered; nothing was stored, try again",
);

// Override layers, changed by their own routes or by accepting a drift as a layer.
export const overrideExists = errorKind(409, 'override_exists', 'The stack already has an override layer with this name');
export const overrideNotFound = errorKind(404, 'override_not_found', 'The stack has no override layer with this name');
export const invalidOverride = errorKind(422, 'invalid_override', 'The override layer refers to something no agent has');

// Per-cluster content and tenants: what a new object or a change of override layers is refused for, wherever it is written.
export const grantRefused = errorKind(
  422,
  'grant_refused',
  "Some targeted agents would refuse objects of this deployment object: their grants do not let the stack's generator place them",
);
export const renderFailed = errorKind(422, 'render_failed', 'The object cannot be rendered for some targeted agents; nothing was stored');
export const rendererUnavailable = errorKind(
  503,
  'renderer_unavailable',
  'This api cannot render charts or overlays: its renderer is not installed (scripts/build-renderer.sh)',
);
export const rendererBusy = errorKind(503, 'renderer_busy', 'Too many charts and overlays are being rendered; retry later');

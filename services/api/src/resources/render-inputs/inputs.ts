import { intentStatementSchema, renderInputDigests, type RenderInputDigest, type RenderInputValues } from '@brokkr/trust/statement';
import type { RenderInputs } from '@brokkr/contracts';
import { loadSourceBlob } from '@brokkr/sources';
import type { Queryable } from '@brokkr/db';
import { capabilitiesOf, signedLayers, type AgentView, type SignedLayer } from '@brokkr/overrides';
import { releaseName } from '../../rendering/source-of.ts';
import { stackLayers } from '../../rendering/sql/layers.ts';
import {
  newestStackSignatures,
  type ServedPlainObject,
  type ServedRenderedObject,
  type ServedTemplateObject,
} from './sql/render-inputs.ts';

/** How many of a stack's newest signatures are searched for the one naming an object's inputs. */
const SIGNATURES_SEARCHED = 50;

/** The statement's payload of a stored bundle (or envelope); unverified: the agent verifies. */
function statementOf(bundle: Record<string, unknown>) {
  const envelope = ('dsseEnvelope' in bundle ? bundle.dsseEnvelope : bundle) as { payload?: unknown } | undefined;
  if (typeof envelope?.payload !== 'string') return undefined;
  try {
    const parsed = intentStatementSchema.safeParse(JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const namedDigests = (inputs: readonly { name: string; digest: { sha256: string } }[], only?: ReadonlySet<string>) =>
  inputs
    .filter((i) => !only || only.has(i.name))
    .map((i) => `${i.name}=${i.digest.sha256}`)
    .sort()
    .join(',');

// Without an exact match the newest signature naming the same object is relayed, so the agent
// refuses it as tampered with (signature_invalid naming the input that differs), not as unsigned:
// for a template-made object the same template version, for any object the same inputs but layers.
const TEMPLATE_VERSION_INPUTS = new Set(['template', 'parameters_schema']);
const sameObject = (inputs: readonly RenderInputDigest[], kind: RenderInputValues['kind']) =>
  kind === 'template' ? namedDigests(inputs, TEMPLATE_VERSION_INPUTS) : namedDigests(inputs.filter((i) => i.name !== 'layers'));

/**
 * The newest stored signature of the stack whose statement names exactly these input digests (any
 * renderer: the agent judges that). The source by the digest the object pinned, not by the stored
 * bytes: a signature is relayed for what the generator submitted, and bytes changed in the store
 * since are the agent's to find. Other parameters or layers likewise: without an exact match, the
 * newest signature of the same object (sameObject).
 */
async function signatureFor(
  db: Queryable,
  stackId: string,
  inputs: RenderInputValues,
  pinnedSource?: string,
): Promise<Record<string, unknown> | null> {
  const digests = renderInputDigests(inputs).map((i) =>
    i.name === 'source' && pinnedSource ? { name: 'source', digest: { sha256: pinnedSource.replace(/^sha256:/, '') } } : i,
  );
  const wanted = namedDigests(digests);
  const same = sameObject(digests, inputs.kind);
  let fallback: Record<string, unknown> | null = null;
  for (const bundle of await newestStackSignatures(db, stackId, SIGNATURES_SEARCHED)) {
    const p = statementOf(bundle)?.predicate;
    if (!p || p.kind !== inputs.kind) continue;
    if (namedDigests(p.inputs ?? []) === wanted) return bundle;
    if (!fallback && sameObject(p.inputs ?? [], inputs.kind) === same) fallback = bundle;
  }
  return fallback;
}

/**
 * Every layer of the stack in its signed form: the agent selects from all of them, and resolves
 * `{{ agent.* }}` in them (and in a chart's values) from its own identity and cluster.
 */
async function layerInputs(db: Queryable, stackId: string): Promise<SignedLayer[]> {
  return signedLayers((await stackLayers(db, stackId)).layers);
}

/**
 * What a deployment object instantiated from a template renders from: the template version and
 * the parameters its provenance row names (docs/signatures.md, "Templates"). The agent renders
 * them with its own engine; Capabilities do not enter a template's render.
 */
export async function templateInputsOf(db: Queryable, object: ServedTemplateObject, agent: AgentView): Promise<RenderInputs> {
  const parameters: unknown = object.template_parameters === null ? null : JSON.parse(object.template_parameters);
  const template = { content: object.template_content, parameters_schema: object.parameters_schema, parameters };
  const layers = await layerInputs(db, object.stack_id);
  const inputs: RenderInputValues = {
    kind: 'template',
    template: template.content,
    parametersSchema: template.parameters_schema,
    parameters,
    renderer: '',
    layers,
  };
  return {
    deployment_object_id: object.id,
    stack_id: object.stack_id,
    kind: 'template',
    archive: '',
    values: null,
    options: null,
    template,
    capabilities: capabilitiesOf(agent.facts),
    layers,
    not_signable: null,
    signature: await signatureFor(db, object.stack_id, inputs),
  };
}

/** What the object renders from, as the hub stores it (undefined: its source blob is gone). */
export async function renderInputsOf(db: Queryable, object: ServedRenderedObject, agent: AgentView): Promise<RenderInputs | undefined> {
  const spec = object.source!;
  const pinned = spec.helm ?? spec.kustomize;
  if (!pinned) return undefined;
  const blob = await loadSourceBlob(db, pinned.digest);
  if (!blob) return undefined;
  const kind = spec.helm ? 'helm' : 'kustomize';
  const options = spec.kustomize
    ? { path: spec.kustomize.path }
    : { release: { name: releaseName(object.stack_name), namespace: 'default' } };
  const values = kind === 'helm' ? (object.source_values ?? {}) : null;
  const layers = await layerInputs(db, object.stack_id);
  const inputs: RenderInputValues = { kind, archive: blob.bytes, values: values ?? undefined, options, renderer: '', layers };
  return {
    deployment_object_id: object.id,
    stack_id: object.stack_id,
    kind,
    archive: blob.bytes.toString('base64'),
    values,
    options,
    capabilities: capabilitiesOf(agent.facts),
    layers,
    not_signable: null,
    signature: await signatureFor(db, object.stack_id, inputs, pinned.digest),
  };
}

/**
 * Plain YAML in a stack with override layers (docs/signatures.md, "Override layers"): the YAML as
 * posted and every layer, which the agent applies itself. Capabilities do not enter it.
 */
export async function plainInputsOf(db: Queryable, object: ServedPlainObject, agent: AgentView): Promise<RenderInputs> {
  const layers = await layerInputs(db, object.stack_id);
  const inputs: RenderInputValues = { kind: 'yaml', content: object.yaml_content, renderer: '', layers };
  return {
    deployment_object_id: object.id,
    stack_id: object.stack_id,
    kind: 'yaml',
    archive: '',
    values: null,
    options: null,
    content: object.yaml_content,
    capabilities: capabilitiesOf(agent.facts),
    layers,
    not_signable: null,
    signature: await signatureFor(db, object.stack_id, inputs),
  };
}

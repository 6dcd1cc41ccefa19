import { sha256Hex } from './digest.ts';

/**
 * What a generator signs for a chart or an overlay (docs/signatures.md, "Charts and overlays"):
 * not the hub's render, which no generator sees, but the inputs an agent renders itself: the
 * source archive (the exact bytes the hub pins by digest), the values, the render options and the
 * stack's override layers.
 * The statement's subject is the SHA-256 of the canonical document of those inputs' digests, so
 * the agent, hashing the bytes the hub relays, finds the subject again only when every input is
 * what was signed.
 */
export const RENDER_INPUTS_TYPE = 'https://brokkr.dev/render-inputs/v1';

export type RenderedKind = 'helm' | 'kustomize' | 'template' | 'yaml';

/** Helm: the release the chart is rendered as; kustomize: the overlay's directory in the archive. */
export type RenderOptions = { release: { name: string; namespace: string } } | { path: string };

/** The inputs as bytes and values: what the generator has, and what the hub relays to the agent. */
export type RenderInputValues = ArchiveInputValues | TemplateInputValues | YamlInputValues;

/** A chart or an overlay: an archive rendered by brokkr-render. */
export interface ArchiveInputValues {
  kind: 'helm' | 'kustomize';
  /** The chart's .tgz or the overlay's .tar.gz, exactly as the hub stores it. */
  archive: Uint8Array;
  /** Helm: the values over the chart's own (kustomize: none). */
  values?: Record<string, unknown> | undefined;
  options: RenderOptions;
  /** The brokkr-render version (`brokkr-render --version`) the inputs are meant for. */
  renderer: string;
  layers?: SignedLayerSet | undefined;
}

/**
 * Every override layer of the stack, in their signed form and order (@brokkr/overrides
 * signedLayers): each agent selects from the whole set by its own identity, so the set is signed,
 * not a selection the hub made. None, or an empty set: the stack has no layers.
 */
export type SignedLayerSet = readonly unknown[];

/**
 * A Brokkr stack template instantiated into a deployment object: the exact template version's
 * text and parameters schema (the schema is signed too: it validates the parameters the engine
 * renders with), and the parameters given.
 */
export interface TemplateInputValues {
  kind: 'template';
  template: string;
  parametersSchema: string;
  parameters: unknown;
  /** The template engine version (`@brokkr/templates`' TEMPLATE_ENGINE_VERSION) the inputs are meant for. */
  renderer: string;
  layers?: SignedLayerSet | undefined;
}

/**
 * Plain YAML in a stack with override layers: the YAML exactly as posted, and the layers, which the
 * agent applies itself (their patches) by its own identity.
 */
export interface YamlInputValues {
  kind: 'yaml';
  content: string;
  /** The layers engine's version (@brokkr/overrides' LAYERS_ENGINE_VERSION) the inputs are meant for. */
  renderer: string;
  layers?: SignedLayerSet | undefined;
}

export interface RenderInputDigest {
  name: string;
  digest: { sha256: string };
}

/** JSON with every object's keys sorted and no whitespace: one text per value, whoever writes it. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const digestOf = (name: string, content: string | Uint8Array): RenderInputDigest => ({ name, digest: { sha256: sha256Hex(content) } });

/**
 * The predicate's `inputs`: each input's digest, by name (source; values for a chart; options; for
 * a template: the template, its parameters schema and the parameters, as canonical JSON; for plain
 * YAML its content), and the stack's override layers (`layers`, canonical JSON) when it has any.
 */
export function renderInputDigests(inputs: RenderInputValues): RenderInputDigest[] {
  const digests =
    inputs.kind === 'template'
      ? templateDigests(inputs)
      : inputs.kind === 'yaml'
        ? [digestOf('content', inputs.content)]
        : archiveDigests(inputs);
  if (inputs.layers?.length) digests.push(digestOf('layers', canonicalJson(inputs.layers)));
  return digests;
}

const templateDigests = (inputs: TemplateInputValues): RenderInputDigest[] => [
  digestOf('template', inputs.template),
  digestOf('parameters_schema', inputs.parametersSchema),
  digestOf('parameters', canonicalJson(inputs.parameters ?? null)),
];

function archiveDigests(inputs: ArchiveInputValues): RenderInputDigest[] {
  const digests = [digestOf('source', inputs.archive)];
  if (inputs.kind === 'helm') digests.push(digestOf('values', canonicalJson(inputs.values ?? {})));
  digests.push(digestOf('options', canonicalJson(inputs.options)));
  return digests;
}

/** The canonical document whose SHA-256 is the statement's subject: the kind, the renderer and each input's digest. */
export function renderInputsDocument(kind: RenderedKind, renderer: string, inputs: readonly RenderInputDigest[]): string {
  const sorted = [...inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return canonicalJson({ _type: RENDER_INPUTS_TYPE, kind, renderer, inputs: sorted });
}

/** The document of these inputs (what `signIntent` signs, and the agent hashes to compare with the subject). */
export function renderInputsContent(inputs: RenderInputValues): string {
  return renderInputsDocument(inputs.kind, inputs.renderer, renderInputDigests(inputs));
}

/** A Helm release name from the stack's name, as the hub names it: lower case, `[a-z0-9-]`, at most 53 characters. */
export const helmReleaseName = (stack: string): string =>
  stack
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 53) || 'release';

/**
 * Why the inputs the agent was relayed are not the signed ones, or undefined. The subject already
 * binds them (it is the digest of their document); this names which input differs, for the refusal.
 */
export function renderInputsMismatch(
  signed: { inputs?: readonly RenderInputDigest[] | undefined; renderer?: string | undefined },
  relayed: readonly RenderInputDigest[],
  renderer: string,
): string | undefined {
  if (signed.renderer !== renderer)
    return `it was signed for renderer ${signed.renderer ?? '(none)'}, and this agent renders with ${renderer}`;
  const want = new Map((signed.inputs ?? []).map((i) => [i.name, i.digest.sha256]));
  for (const input of relayed) {
    const expected = want.get(input.name);
    if (expected !== input.digest.sha256)
      return `its ${input.name} (sha256 ${input.digest.sha256.slice(0, 12)}…) is not the one signed${expected ? ` (${expected.slice(0, 12)}…)` : ''}`;
  }
  if (want.size !== relayed.length) return 'it was signed with other inputs than the ones relayed';
  return undefined;
}

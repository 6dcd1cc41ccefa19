import type { ClusterFacts, RenderInputs } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import { createRenderer, locateRenderer, type RenderResult, type Renderer } from '@brokkr/render';
import { TEMPLATE_ENGINE_VERSION } from '@brokkr/templates';
import {
  renderInputDigests,
  renderInputsDocument,
  sha256Hex,
  type RenderedKind,
  type RenderInputDigest,
  type RenderInputValues,
} from '@brokkr/trust';
import { capabilitiesOf, LAYERS_ENGINE_VERSION, type AgentView } from '@brokkr/overrides';
import { errorMessage } from '../util/async.ts';
import { layeredValues, ownLayers, patchedRender } from './own-layers.ts';
import type { TrustRelay } from './relay.ts';
import { OwnTemplateRenders } from './own-template-render.ts';

/**
 * A chart or an overlay the hub serves this agent, as the trust gate checks it: the canonical
 * document of the relayed inputs' digests (hashed here, from the bytes relayed) with this agent's
 * renderer, which the signature's subject must be, and the signature the hub relayed with them.
 */
export interface RelayedRender {
  kind: RenderedKind;
  document: string;
  digests: RenderInputDigest[];
  renderer: string;
  signature: unknown;
  /** Why the hub's render for this agent is more than the inputs make (the agent refuses it): agent references. */
  notSignable: string | null;
  inputs: RenderInputs;
}

export interface OwnRendersDeps {
  relay: TrustRelay;
  /** brokkr-render (BROKKR__AGENT__RENDERER_BINARY); unset: built from this checkout (development). */
  binary: string | undefined;
  logger: Logger;
  /**
   * Who this agent is when override layers select it and `{{ agent.* }}` is resolved: its own id,
   * name and cluster, and its trust policy's labels and annotations.
   */
  me: Omit<AgentView, 'facts'>;
  /** Its own cluster's facts (`.Capabilities`, `{{ agent.facts.* }}`), never the hub's record of them. */
  facts: () => Promise<ClusterFacts | undefined>;
}

/** How many render inputs are fetched at once. */
const FETCHES_AT_ONCE = 4;

/**
 * Charts, overlays, templates and plain YAML under override layers, signed by their inputs
 * (docs/signatures.md): the agent fetches the inputs the hub relays, and renders them (charts and
 * overlays with its own brokkr-render, templates with @brokkr/templates, layers with
 * @brokkr/overrides) once the gate found them signed, against its own identity and cluster. Renders are kept per inputs document (and the Capabilities rendered
 * with), so a resync or a re-screen renders nothing again; the renderer starts with the first chart.
 */
export class OwnRenders {
  private renderer: Promise<Renderer> | undefined;
  /** By deployment object id; null: not a chart or an overlay (the hub said 404), which a deployment object stays. */
  private readonly relayed = new Map<string, RelayedRender | null>();
  private readonly renders = new Map<string, Promise<RenderResult>>();
  private readonly templates = new OwnTemplateRenders();

  constructor(private readonly deps: OwnRendersDeps) {}

  /** Whether the object was asked about already. */
  known(objectId: string): boolean {
    return this.relayed.has(objectId);
  }

  get(objectId: string): RelayedRender | undefined {
    return this.relayed.get(objectId) ?? undefined;
  }

  /** Asked again next time (a refused input the hub may correct). */
  forget(objectId: string): void {
    if (this.relayed.get(objectId)) this.relayed.delete(objectId);
  }

  /** Asks the hub what these objects render from; a failed request leaves the object unknown, to be asked again. */
  async fetch(objectIds: readonly string[]): Promise<void> {
    for (let i = 0; i < objectIds.length; i += FETCHES_AT_ONCE)
      await Promise.all(objectIds.slice(i, i + FETCHES_AT_ONCE).map((id) => this.fetchOne(id)));
  }

  private async fetchOne(objectId: string): Promise<void> {
    try {
      const inputs = await this.deps.relay.renderInputs(objectId);
      this.relayed.set(objectId, inputs ? await this.prepare(inputs) : null);
    } catch (err) {
      this.deps.logger.warn(
        { deploymentObject: objectId, err: errorMessage(err) },
        'could not fetch the render inputs of a chart or overlay',
      );
    }
  }

  private async prepare(inputs: RenderInputs): Promise<RelayedRender> {
    const renderer =
      inputs.kind === 'template'
        ? TEMPLATE_ENGINE_VERSION
        : inputs.kind === 'yaml'
          ? LAYERS_ENGINE_VERSION
          : (await this.rendererNow()).version;
    const digests = renderInputDigests(inputValues(inputs, renderer));
    return {
      kind: inputs.kind,
      document: renderInputsDocument(inputs.kind, renderer, digests),
      digests,
      renderer,
      signature: inputs.signature ?? undefined,
      notSignable: inputs.not_signable,
      inputs,
    };
  }

  /**
   * The agent's render of inputs the gate admitted, against its own cluster's facts; the same inputs
   * and facts render once (keyed by the inputs document and the facts).
   */
  async render(r: RelayedRender): Promise<RenderResult> {
    const facts = await this.deps.facts();
    if (!facts) return { ok: false, reason: 'busy', error: 'the cluster’s version and API versions cannot be read yet' };
    const key = `${r.document}\n${sha256Hex(JSON.stringify(facts))}`;
    let result = this.renders.get(key);
    if (!result) {
      result = this.renderNow(r, { ...this.deps.me, facts });
      this.renders.set(key, result);
      // A failure that is the agent's own (busy, timeout, no renderer) is tried again next time.
      void result.then(
        (res) => {
          if (!res.ok && (res.reason === 'busy' || res.reason === 'timeout')) this.renders.delete(key);
        },
        () => this.renders.delete(key),
      );
    }
    return result;
  }

  private async renderNow(r: RelayedRender, me: AgentView): Promise<RenderResult> {
    const { inputs } = r;
    const layers = ownLayers(inputs, me);
    if (inputs.kind === 'yaml') return patchedRender({ ok: true, yaml: inputs.content ?? '' }, layers, me);
    if (inputs.kind === 'template') return patchedRender(await this.templates.render(inputs.template ?? undefined), layers, me);
    const options = inputs.options;
    if (!options) return { ok: false, reason: 'invalid', error: 'the hub relayed no render options' };
    const archive = Buffer.from(inputs.archive, 'base64');
    if (!('release' in options)) {
      const job = { kind: 'kustomize' as const, archive, path: options.path };
      return patchedRender(await (await this.rendererNow()).render('agent', job), layers, me);
    }
    const values = layeredValues(inputs.values ?? {}, layers, me);
    if (!values.ok) return values;
    // `.Capabilities` from this cluster, as the hub derives them from what this agent reported.
    const capabilities = capabilitiesOf(me.facts);
    const job = { kind: 'helm' as const, archive, values: values.values, release: options.release, capabilities };
    return patchedRender(await (await this.rendererNow()).render('agent', job), layers, me);
  }

  private rendererNow(): Promise<Renderer> {
    this.renderer ??= (async () => {
      const binary = this.deps.binary ?? (await locateRenderer());
      return createRenderer({ binary, concurrency: 1, log: (line) => this.deps.logger.info(line) });
    })().catch((err: unknown) => {
      this.renderer = undefined;
      throw err;
    });
    return this.renderer;
  }

  /** Forgets the inputs and renders of objects no longer served or admitted, so the maps stay bounded. */
  retain(objectIds: ReadonlySet<string>): void {
    for (const id of this.relayed.keys()) if (!objectIds.has(id)) this.relayed.delete(id);
    const live = new Set([...this.relayed.values()].flatMap((r) => (r ? [r.document] : [])));
    for (const key of this.renders.keys()) if (!live.has(key.slice(0, key.lastIndexOf('\n')))) this.renders.delete(key);
  }

  async close(): Promise<void> {
    const renderer = await this.renderer?.catch(() => undefined);
    await Promise.all([renderer?.close(), this.templates.close()]);
  }
}

/** The relayed inputs as the digests are taken of them (from the bytes relayed, never from the hub's digests). */
function inputValues(inputs: RenderInputs, renderer: string): RenderInputValues {
  const layers = inputs.layers;
  if (inputs.kind === 'yaml') return { kind: 'yaml', content: inputs.content ?? '', renderer, layers };
  if (inputs.kind === 'template')
    return {
      kind: 'template',
      template: inputs.template?.content ?? '',
      parametersSchema: inputs.template?.parameters_schema ?? '',
      parameters: inputs.template?.parameters ?? null,
      renderer,
      layers,
    };
  return {
    kind: inputs.kind,
    archive: Buffer.from(inputs.archive, 'base64'),
    values: inputs.values ?? undefined,
    options: inputs.options ?? { path: '' },
    renderer,
    layers,
  };
}

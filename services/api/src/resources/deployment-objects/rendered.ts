import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { stackLayersChanged, stackNotFound, stackNotOwned } from '../../errors/catalogue.ts';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import type { WriteScope } from '../../events/transact.ts';
import { yamlChecksum } from '../../yaml/index.ts';
import type { AgentView } from '@brokkr/overrides';
import { refuseMisplacedRenders } from '../../rendering/placement.ts';
import { planRenders, type RenderSource } from '../../rendering/plan.ts';
import { prepareRenders, type PreparedRenders } from '../../rendering/prepare.ts';
import { refuseUnrenderable } from '../../rendering/refusals.ts';
import { renderInput, type RenderDeps } from '../../rendering/render.ts';
import { releaseName } from '../../rendering/source-of.ts';
import { stackAgents } from '../../rendering/sql/agents.ts';
import { stackLayers } from '../../rendering/sql/layers.ts';
import { storeObjectRenders } from '../../rendering/sql/store-renders.ts';
import { insertOnce, newRow, type WriteRunner } from './object-row.ts';
import type { NewDeploymentObject } from './sql/create-deployment-object.ts';

/** Where an object's agents get their YAML from, when it is not the same YAML for all of them. */
export type ObjectSource =
  /** Its own YAML, changed per agent by the stack's override layers. */
  | { kind: 'yaml' }
  | { kind: 'helm'; digest: string; pinned: Record<string, unknown>; values: Record<string, unknown> }
  | { kind: 'kustomize'; digest: string; pinned: Record<string, unknown>; path: string };

export interface RenderedObject {
  stackId: string;
  /** The YAML of a `yaml` source; '' for a chart or an overlay (its stored YAML is a render: storedYamlOf). */
  yamlContent: string;
  isDeletionMarker: boolean;
  caller?: Identity;
  source: ObjectSource;
}

export interface StoreDeps {
  /** One statement: writeOnce for the plain POST, or the caller's transaction. */
  write: WriteRunner;
  /** Several statements in one transaction: a new one, or the caller's. */
  transact: WriteRunner;
  db: Queryable;
  rendering: RenderDeps;
}

const MAX_ATTEMPTS = 3;

/** An agent that has nothing: no layers, labels, annotations or facts. Its render is what Brokkr's clients read as the object's YAML. */
const NOBODY: AgentView = {
  id: '00000000-0000-0000-0000-000000000000',
  name: '',
  cluster_name: '',
  labels: [],
  annotations: {},
  facts: {},
};

async function liveStack(db: Queryable, stackId: string, caller: Identity | undefined): Promise<{ name: string; generator_id: string }> {
  const { rows } = await db.query<{ name: string; generator_id: string }>(
    'SELECT name, generator_id FROM stacks WHERE id = $1 AND deleted_at IS NULL',
    [stackId],
  );
  const stack = rows[0];
  if (!stack) throw stackNotFound();
  if (caller && !caller.admin && caller.generator !== stack.generator_id) throw stackNotOwned();
  return stack;
}

function renderSourceOf(object: RenderedObject, stackName: string): RenderSource {
  const source = object.source;
  if (source.kind === 'yaml') return { kind: 'yaml', yaml: object.yamlContent, checksum: yamlChecksum(object.yamlContent) };
  if (source.kind === 'helm')
    return { kind: 'helm', digest: source.digest, values: source.values, release: { name: releaseName(stackName), namespace: 'default' } };
  return { kind: 'kustomize', digest: source.digest, path: source.path };
}

/** What the object's own yaml_content shows Brokkr's clients: its YAML, else the render for an agent that has nothing, else some agent's. */
async function storedYamlOf(rendering: RenderDeps, tenant: string, source: RenderSource, prepared: PreparedRenders): Promise<string> {
  if (source.kind === 'yaml') return source.yaml;
  const [plan] = planRenders(source, [], [NOBODY], prepared.rendererVersion);
  if (plan && 'input' in plan) {
    const nobody = await renderInput(rendering, tenant, plan.input);
    if (nobody.ok) return nobody.yaml;
  }
  const first = prepared.yamlByAgent.values().next();
  return first.done
    ? '# Rendered for each agent: none is targeted yet, and it has no render for an agent without annotations.\n'
    : first.value;
}

/** The object's row, rendered with the layers of `revision`: inserted only if they are still the stack's. */
function renderedRow(object: RenderedObject, storedYaml: string, revision: number): NewDeploymentObject {
  const source = object.source;
  const spec = source.kind === 'yaml' ? null : { spec: source.pinned, values: source.kind === 'helm' ? source.values : null };
  return { ...newRow({ ...object, yamlContent: storedYaml }), source: spec, rendered: true, layersRevision: revision };
}

/** Undefined when the stack's layers changed after the renders were made (render again). */
async function tryStoreRendered(deps: StoreDeps, object: RenderedObject): Promise<DeploymentObjectRow | undefined> {
  const stack = await liveStack(deps.db, object.stackId, object.caller);
  const source = renderSourceOf(object, stack.name);
  const [agents, { revision, layers }] = await Promise.all([stackAgents(deps.db, object.stackId), stackLayers(deps.db, object.stackId)]);
  const prepared = await prepareRenders({ ...deps.rendering, db: deps.db }, { tenant: stack.generator_id, source, agents, layers });
  refuseUnrenderable(prepared.failures);
  const row = renderedRow(object, await storedYamlOf(deps.rendering, stack.generator_id, source, prepared), revision);
  return deps.transact(async (w: WriteScope) => {
    let outcome = await insertOnce(w, row);
    if (!outcome.inserted && outcome.stackOwned && outcome.confined.length && !outcome.layersChanged) {
      refuseMisplacedRenders(outcome.confined, prepared);
      outcome = await insertOnce(w, { ...row, grantsChecked: true });
    }
    if (!outcome.inserted && outcome.layersChanged) return undefined;
    if (!outcome.inserted) throw outcome.stackFound ? stackNotOwned() : stackNotFound();
    await storeObjectRenders(w.db, outcome.row.id, prepared);
    return outcome.row;
  });
}

/**
 * An object each agent gets its own YAML of: a chart, an overlay, or plain YAML on a stack with
 * override layers. Every targeted agent's render is made first (each distinct input once, none
 * already stored), outside any transaction; if one cannot be rendered the POST is refused (422
 * `render_failed` naming each agent) and nothing is stored. Then, in one transaction: the object
 * (the grants checked against each confined agent's own render), the new renders and which render
 * each agent gets. If the stack's layers changed meanwhile, it renders again.
 */
export async function storeRendered(deps: StoreDeps, object: RenderedObject): Promise<DeploymentObjectRow> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const row = await tryStoreRendered(deps, object);
    if (row) return row;
  }
  throw stackLayersChanged();
}

import { createHash } from 'node:crypto';
import { PREVIEW_LIMITS, type PendingPreview, type PreviewObjectResult } from '@brokkr/contracts';
import { placementRefusal, type PlacementScope } from '@brokkr/grants';
import type { GrantBook } from '../grants/book.ts';
import type { ApiResource } from '../kube/discovery.ts';
import { isNotFound } from '../kube/errors.ts';
import type { LiveResource } from '../kube/objects.ts';
import { ADOPT_ANNOTATION } from '../manifest/keys.ts';
import { parseManifests, type KubeObject } from '../manifest/parse.ts';
import { takeInventory, objectKey, type InventoryScope, type LiveObject } from '../reconcile/inventory.ts';
import { stamp, type StampPlacement } from '../manifest/stamp.ts';
import { ownedAfterApply, stackClaim, type ClaimRule } from '../reconcile/ownership.ts';
import { describe, targetNamespace } from '../reconcile/plan.ts';
import { mapLimit } from '../util/async.ts';
import { fieldDiff } from './diff.ts';

export interface PreviewOutcome {
  objects: PreviewObjectResult[];
  /** Set when the stack could not be checked at all (unparseable YAML, inventory failed). */
  error: string | null;
}

const cut = (text: string) => (text.length > PREVIEW_LIMITS.messageChars ? `${text.slice(0, PREVIEW_LIMITS.messageChars - 1)}…` : text);
const messageOf = (err: unknown) => cut(err instanceof Error ? err.message : String(err));

/** Kinds the preview itself defines through a CRD: not served yet, so their objects cannot be dry-run. */
function kindsDefinedBy(docs: KubeObject[]): Set<string> {
  const kinds = new Set<string>();
  for (const d of docs) {
    if (d.kind !== 'CustomResourceDefinition' || !d.apiVersion.startsWith('apiextensions.k8s.io/')) continue;
    const spec = d.spec as { group?: string; names?: { kind?: string } } | undefined;
    if (spec?.group && spec.names?.kind) kinds.add(`${spec.group}/${spec.names.kind}`);
  }
  return kinds;
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** The cluster as the preview loop sees it: the reconciler's scope, its adoption setting and the grants. */
export interface PreviewScope extends InventoryScope {
  adoptionEnabled: boolean;
  grants: GrantBook;
  tenantPodSecurity: 'privileged' | 'baseline' | 'restricted';
}

interface DryRunScope extends PreviewScope {
  /** Namespaces the preview creates (a namespaced object in one of them cannot be dry-run before it exists). */
  newNamespaces?: Set<string>;
}

type Stamp = (o: KubeObject, placement: StampPlacement) => KubeObject;
type Shown = Omit<PreviewObjectResult, 'action'>;
interface OneResult {
  result: PreviewObjectResult;
  key?: string;
}

const shownOf = (doc: KubeObject, namespace: string | null): Shown => ({
  api_version: doc.apiVersion,
  kind: doc.kind,
  namespace,
  name: doc.metadata.name,
  diff: [],
  diff_truncated: false,
  note: null,
  error: null,
});

/** A kind the cluster does not serve: created by the preview's own CRD (not checkable), else a schema error. */
function unresolved(doc: KubeObject, defined: Set<string>): OneResult {
  const shown = shownOf(doc, doc.metadata.namespace ?? null);
  if (defined.has(`${groupOf(doc.apiVersion)}/${doc.kind}`)) {
    return { result: { ...shown, action: 'created', note: 'its CustomResourceDefinition is created by this change: not validated' } };
  }
  return { result: { ...shown, action: null, error: `no such resource type in the cluster: ${doc.apiVersion}, Kind=${doc.kind}` } };
}

/** Where the reconciler would put it. */
const namespaceOf = (scope: DryRunScope, doc: KubeObject, resource: ApiResource, rules: StackRules) =>
  targetNamespace(doc, resource, { watchNamespace: scope.watchNamespace, scope: rules.placement });

/** A refused dry run: an object in a namespace the preview itself creates cannot be checked yet; anything else is its error. */
function refused(scope: DryRunScope, shown: Shown, err: unknown, isNew: boolean): PreviewObjectResult {
  const namespace = shown.namespace;
  if (isNew && namespace && isNotFound(err) && scope.newNamespaces?.has(namespace)) {
    return { ...shown, action: 'created', note: `namespace ${namespace} is created by this change: not validated` };
  }
  return { ...shown, action: null, error: messageOf(err) };
}

/** How one stack's preview treats objects: where its grant lets it place them, its stamp, and the reconciler's claim rule. */
interface StackRules {
  placement: PlacementScope;
  stampOf: Stamp;
  claim: ClaimRule;
}

/**
 * An object the stack may not apply over: the refusal the reconciler would report, and nothing of
 * the live object (whose values belong to someone else).
 */
const conflict = (
  shown: Shown,
  doc: { kind: string; metadata: { name: string; namespace?: string | undefined } },
  reason: string,
): PreviewObjectResult => ({
  ...shown,
  action: null,
  error: cut(`conflict: ${describe(doc)} ${reason}`),
});

/**
 * Where the object may not go: outside the watched namespace, or outside what the stack's grant
 * places (a conflict, as the reconciler would refuse it); undefined when it may.
 */
function misplaced(
  scope: DryRunScope,
  rules: StackRules,
  doc: KubeObject,
  at: { resource: ApiResource; shown: Shown },
): PreviewObjectResult | undefined {
  const namespace = at.shown.namespace ?? undefined;
  if (namespace !== undefined && scope.watchNamespace && namespace !== scope.watchNamespace) {
    return { ...at.shown, action: null, error: `in namespace ${namespace}, but this agent only manages namespace ${scope.watchNamespace}` };
  }
  const placed = { apiVersion: doc.apiVersion, kind: doc.kind, name: doc.metadata.name, namespace, namespaced: at.resource.namespaced };
  const outside = placementRefusal(rules.placement, placed);
  return outside ? conflict(at.shown, { kind: doc.kind, metadata: { name: doc.metadata.name, namespace } }, outside) : undefined;
}

/** The dry-run apply of one resolved object, compared with the live one. */
async function dryRunOne(scope: DryRunScope, doc: KubeObject, resource: ApiResource, rules: StackRules): Promise<PreviewObjectResult> {
  const namespace = namespaceOf(scope, doc, resource, rules);
  const shown = shownOf(doc, namespace ?? null);
  const refusal = misplaced(scope, rules, doc, { resource, shown });
  if (refusal) return refusal;
  const live = await scope.objects.get(resource, namespace, doc.metadata.name);
  const claim = rules.claim(doc, live?.metadata);
  if (claim.verdict === 'refused') return conflict(shown, doc, claim.reason);
  const adopted = claim.verdict === 'adopt';
  let after: LiveResource;
  try {
    const owned = ownedAfterApply(live?.metadata, scope.agentId, claim);
    after = await scope.objects.apply(resource, rules.stampOf(doc, { owned, namespace, adopted }), true);
  } catch (err) {
    return refused(scope, shown, err, !live);
  }
  if (!live) return { ...shown, action: 'created' };
  const { changes, truncated } = fieldDiff(live as Record<string, unknown>, after as Record<string, unknown>, { withholdBefore: adopted });
  return {
    ...shown,
    action: changes.length ? 'changed' : 'unchanged',
    diff: changes,
    diff_truncated: truncated,
    note: adopted ? `adopted into this stack (${ADOPT_ANNOTATION}): its current values are not shown` : null,
  };
}

/** One document: resolve, read the live object, dry-run apply exactly as the reconciler applies, compare. */
async function previewOne(scope: DryRunScope, doc: KubeObject, rules: StackRules, defined: Set<string>): Promise<OneResult> {
  const resource = await scope.discovery.resolve(doc.apiVersion, doc.kind);
  if (!resource) return unresolved(doc, defined);
  const namespace = namespaceOf(scope, doc, resource, rules);
  return { key: objectKey(resource, namespace, doc.metadata.name), result: await dryRunOne(scope, doc, resource, rules) };
}

function pruned(live: LiveObject): PreviewObjectResult {
  return {
    api_version: live.resource.apiVersion,
    kind: live.resource.kind,
    namespace: live.meta.namespace ?? null,
    name: live.meta.name,
    action: 'pruned',
    diff: [],
    diff_truncated: false,
    error: null,
    note: null,
  };
}

/**
 * What applying the preview would do on this cluster, changing nothing: every document is
 * server-side applied with `dryRun=All` (same field manager, force and strict field validation
 * as the reconciler, same stamp), the answer compared with the live object; the stack's live
 * objects (the reconciler's inventory) that the preview does not contain are listed as pruned.
 * An object the reconciler would refuse to apply over (reconcile/ownership.ts) is reported as a
 * conflict, without a dry run and without any of its values.
 */
export async function previewOnCluster(scope: DryRunScope, preview: PendingPreview): Promise<PreviewOutcome> {
  let docs: KubeObject[];
  try {
    docs = preview.is_deletion_marker ? [] : parseManifests(preview.yaml_content);
  } catch (err) {
    return { objects: [], error: `the YAML cannot be read as Kubernetes objects: ${messageOf(err)}` };
  }
  let owned: LiveObject[];
  try {
    owned = (await takeInventory(scope)).byStack.get(preview.stack_id) ?? [];
  } catch (err) {
    return { objects: [], error: `could not list the stack's live objects: ${messageOf(err)}` };
  }
  const placement = await placementOf(scope.grants, preview.stack_id);
  if (!placement)
    return { objects: [], error: `no grant on this agent covers stack ${preview.stack_id}: nothing of it would be applied here` };
  const checksum = createHash('sha256').update(preview.yaml_content).digest('hex');
  const podSecurity = !placement.wholeCluster && scope.tenantPodSecurity !== 'privileged' ? scope.tenantPodSecurity : undefined;
  const stampCtx = { stackId: preview.stack_id, checksum, objectId: preview.id, agentId: scope.agentId, podSecurity };
  const rules: StackRules = {
    placement,
    stampOf: (o, placement) => stamp(o, stampCtx, placement),
    claim: stackClaim(preview.stack_id, scope.adoptionEnabled && placement.grant.adoption),
  };
  const newNamespaces = new Set(docs.filter((d) => d.kind === 'Namespace' && d.apiVersion === 'v1').map((d) => d.metadata.name));
  const defined = kindsDefinedBy(docs);
  const settled = await mapLimit(docs, scope.concurrency, (doc) => previewOne({ ...scope, newNamespaces }, doc, rules, defined));
  const keys = new Set<string>();
  const objects = settled.map((s, i) => {
    if (s.status === 'fulfilled') {
      if (s.value.key) keys.add(s.value.key);
      return s.value.result;
    }
    const doc = docs[i]!;
    return { ...shownOf(doc, doc.metadata.namespace ?? null), action: null, error: messageOf(s.reason) };
  });
  for (const live of owned) if (!keys.has(objectKey(live.resource, live.meta.namespace, live.meta.name))) objects.push(pruned(live));
  return { objects: objects.slice(0, PREVIEW_LIMITS.objects), error: null };
}

/** The stack's placement scope; the grants are read again once when they do not know the stack yet. */
async function placementOf(grants: GrantBook, stackId: string): Promise<PlacementScope | undefined> {
  const known = grants.scopeFor(stackId);
  if (known) return known;
  await grants.refresh();
  return grants.scopeFor(stackId);
}

import type { PlacementScope } from '@brokkr/grants';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import { GENERATOR_LABEL, POD_SECURITY_LABELS } from '../manifest/keys.ts';
import type { PlannedObject } from '../reconcile/plan.ts';

export interface TenantNamespaceContext {
  objects: KubeObjects;
  discovery: Discovery;
  /** The Pod Security Standard it gets; privileged: no labels. */
  podSecurity: 'privileged' | 'baseline' | 'restricted';
}

/**
 * A confined generator's own namespace (its grant's default_namespace), created when one of its
 * objects goes there and it does not exist yet: labelled with the generator and the Pod Security
 * Standard, and never any stack's (no stack label), so no prune or stack deletion takes it along.
 */
export async function ensureTenantNamespace(ctx: TenantNamespaceContext, scope: PlacementScope, planned: PlannedObject[]): Promise<void> {
  const name = scope.grant.default_namespace;
  if (!planned.some((p) => p.namespace === name)) return;
  const resource = await ctx.discovery.resolve('v1', 'Namespace');
  if (!resource || (await ctx.objects.getMetadata(resource, undefined, name))) return;
  const labels: Record<string, string> = { [GENERATOR_LABEL]: scope.generatorId };
  if (ctx.podSecurity !== 'privileged') for (const key of POD_SECURITY_LABELS) labels[key] = ctx.podSecurity;
  const namespace: { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string> } } = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels },
  };
  await ctx.objects.apply(resource, namespace);
}

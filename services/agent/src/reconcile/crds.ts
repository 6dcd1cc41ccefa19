import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import { sleep } from '../util/async.ts';
import type { PlannedObject } from './plan.ts';

interface CrdSpec {
  group?: string;
  names?: { kind?: string };
  versions?: { name: string; served?: boolean }[];
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const POLL_MS = 100;

async function established(objects: KubeObjects, crd: PlannedObject): Promise<boolean> {
  const live = await objects.get(crd.resource, undefined, crd.object.metadata.name);
  const conditions = (live?.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  const names = conditions.find((c) => c.type === 'NamesAccepted');
  if (names?.status === 'False')
    throw new Error(
      `CustomResourceDefinition '${crd.object.metadata.name}': ${names.reason ?? 'names not accepted'}: ${names.message ?? ''}`,
    );
  return conditions.some((c) => c.type === 'Established' && c.status === 'True');
}

/**
 * Custom resources of a CRD applied in the same pass can only be applied once the CRD is
 * Established AND its group-version is in discovery; both are polled up to the deadline.
 */
export async function waitForCrds(objects: KubeObjects, discovery: Discovery, crds: PlannedObject[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.object.metadata.name;
    await pollUntil(() => established(objects, crd), deadline, `CustomResourceDefinition '${name}' not Established within ${timeoutMs} ms`);
  }
  discovery.invalidate();
  for (const crd of crds) {
    const spec = (crd.object.spec ?? {}) as CrdSpec;
    const kind = spec.names?.kind;
    if (!spec.group || !kind) continue;
    for (const version of (spec.versions ?? []).filter((v) => v.served !== false)) {
      const apiVersion = `${spec.group}/${version.name}`;
      await pollUntil(
        async () => (await discovery.resolve(apiVersion, kind)) !== undefined,
        deadline,
        `${kind} ${apiVersion} not served within ${timeoutMs} ms`,
      );
    }
  }
}

async function pollUntil(check: () => Promise<boolean>, deadline: number, timeoutMessage: string): Promise<void> {
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(timeoutMessage);
    await sleep(POLL_MS);
  }
}

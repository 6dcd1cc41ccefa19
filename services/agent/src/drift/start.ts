import type { EffectiveDriftPolicy } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import type { DriftHooks } from '../reconcile/drift-hooks.ts';
import { DriftDetector } from './detector.ts';
import { StackGate } from './gate.ts';
import { DriftLoop } from './loop.ts';
import { DriftRegistry } from './registry.ts';
import { DriftReporter, type DriftSink } from './reporter.ts';

/** An object whose drift an operator accepted is checked again after this: the ignore rule reaches the agent with its grants first. */
const AFTER_ACCEPTANCE_MS = 2000;

export interface DriftDeps {
  kube: KubeClient;
  objects: KubeObjects;
  broker: DriftSink;
  metrics: AgentMetrics;
  logger: Logger;
  agentId: string;
  watchNamespace: string | undefined;
  concurrency: number;
  debounceMs: number;
  sweepIntervalMs: number;
  /** The stack's drift policy (grants/book.ts) and how to hear that the grants were read again. */
  policies: { driftPolicyFor(stackId: string): EffectiveDriftPolicy; onRefresh(listener: () => void): void };
  isActive(): boolean;
}

export interface Drift {
  /** What the reconciler calls. */
  hooks: DriftHooks;
  loop: DriftLoop;
  /** The watches, checks and sweeps, and the reports to the hub, until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
}

/** Drift detection wired to the agent's clients (docs/drift.md). */
export function createDrift(deps: DriftDeps): Drift {
  const logger = deps.logger.child({ loop: 'drift' });
  const registry = new DriftRegistry();
  const gate = new StackGate();
  const policyFor = (stackId: string) => deps.policies.driftPolicyFor(stackId);
  const reporter = new DriftReporter({ sink: deps.broker, agentId: deps.agentId, metrics: deps.metrics, logger });
  const detector = new DriftDetector({ objects: deps.objects, registry, gate, reporter, metrics: deps.metrics, logger, policyFor });
  const loop = new DriftLoop({ ...deps, registry, detector, reporter, gate, logger, policyFor });
  reporter.onClosed = (ids) => {
    for (const key of detector.endEpisodes(ids)) loop.schedule(key, Math.max(deps.debounceMs, AFTER_ACCEPTANCE_MS));
  };
  deps.policies.onRefresh(() => loop.policiesRefreshed());
  const hooks: DriftHooks = {
    exclusive: (stackId, fn) => gate.exclusive(stackId, fn),
    applied(d, planned) {
      const owned = planned.filter((p) => p.owned);
      loop.applied(
        d.stack_id,
        d.id,
        owned.map((p) => ({
          key: p.key,
          resource: p.resource,
          object: p.object,
          namespace: p.namespace,
          ...(p.live ? { live: p.live } : {}),
        })),
      );
    },
    forget: (stackId, deleted) => loop.forget(stackId, deleted),
  };
  return {
    hooks,
    loop,
    async run(signal) {
      await Promise.all([loop.run(signal), reporter.run(signal)]);
    },
  };
}

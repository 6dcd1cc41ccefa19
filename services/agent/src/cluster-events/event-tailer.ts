import type { KubeConfig } from '@kubernetes/client-node';
import type { K8sEventFrameBody } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { ClusterEventsChannel } from './channel.ts';
import type { StackAdmission } from './admission.ts';
import { touch, type CursorStore } from './cursor-store.ts';
import { stackOf } from './stack-of.ts';
import { runWatch } from './watch-loop.ts';

/** Which stack an involved object belongs to is remembered this long (Brokkr: 5 min, positive and negative). */
const STACK_CACHE_MS = 5 * 60_000;
const STACK_CACHE_MAX = 10_000;
const UNSENT_MAX = 1000;

interface KubeEvent {
  metadata?: { uid?: string; resourceVersion?: string; creationTimestamp?: string };
  involvedObject?: { apiVersion?: string; kind?: string; namespace?: string; name?: string; uid?: string };
  reason?: string;
  message?: string;
  type?: string;
  source?: { component?: string };
  /** Set by events.k8s.io/v1 writers (the scheduler, among others), which leave `source` empty. */
  reportingComponent?: string;
  eventTime?: string | null;
  lastTimestamp?: string | null;
  firstTimestamp?: string | null;
  series?: { lastObservedTime?: string };
}

export interface EventTailerDeps {
  kc: KubeConfig;
  objects: KubeObjects;
  discovery: Discovery;
  channel: ClusterEventsChannel;
  cursor: CursorStore;
  agentId: string;
  watchNamespace: string | undefined;
  grants: StackAdmission;
  logger: Logger;
}

const observedAt = (e: KubeEvent) =>
  e.series?.lastObservedTime ?? e.eventTime ?? e.lastTimestamp ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;

interface Involved {
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string;
  uid: string;
}

/** Events without an involved uid, name or kind are dropped (as in Brokkr). */
function involvedOf(event: KubeEvent): Involved | undefined {
  const o = event.involvedObject;
  if (!o?.uid || !o.name || !o.kind) return undefined;
  return { apiVersion: o.apiVersion ?? 'v1', kind: o.kind, namespace: o.namespace, name: o.name, uid: o.uid };
}

/** Brokkr's field mapping. */
function frameBody(agentId: string, stackId: string, event: KubeEvent, involved: Involved): K8sEventFrameBody {
  return {
    agent_id: agentId,
    stack_id: stackId,
    observed_at: new Date(observedAt(event) ?? Date.now()).toISOString(),
    reason: event.reason ?? '',
    message: event.message ?? '',
    event_type: event.type ?? 'Normal',
    // Brokkr sends source.component only: null for every event an events.k8s.io/v1 writer reported.
    source: event.source?.component || event.reportingComponent || null,
    involved_object: {
      api_version: involved.apiVersion,
      kind: involved.kind,
      namespace: involved.namespace ?? null,
      name: involved.name,
      uid: involved.uid,
    },
  };
}

/**
 * Streams the Kubernetes Events whose involved object carries the stack marker as `k8s_event`
 * frames (Normal and Warning alike; every update of an Event is sent again, as in Brokkr).
 * Resumes from the cursor: an Event version already sent is never sent again, and on the very
 * first start only Events observed from then on are sent. A frame the channel does not take is
 * not recorded as sent; it is offered again when the channel is back (`retryUnsent`).
 */
export class EventTailer {
  private readonly stacks = new Map<string, { stack: string | undefined; at: number }>();
  /** Events the channel did not take (down or full), by uid: offered again when it is back up. */
  private readonly unsent = new Map<string, KubeEvent>();

  constructor(private readonly deps: EventTailerDeps) {}

  /** The channel is up again: send what it refused meanwhile. */
  retryUnsent(): void {
    const events = [...this.unsent.values()];
    this.unsent.clear();
    for (const event of events) void this.onEvent('MODIFIED', event);
  }

  run(signal: AbortSignal): Promise<void> {
    const ns = this.deps.watchNamespace;
    const path = ns ? `/api/v1/namespaces/${encodeURIComponent(ns)}/events` : '/api/v1/events';
    return runWatch(this.deps.kc, path, (phase, obj) => void this.onEvent(phase, obj as KubeEvent), { logger: this.deps.logger, signal });
  }

  private async onEvent(phase: string, event: KubeEvent): Promise<void> {
    const uid = event.metadata?.uid;
    if (!uid) return;
    if (phase === 'DELETED') {
      delete this.deps.cursor.cursor.events[uid];
      return;
    }
    const involved = involvedOf(event);
    if (!involved || !this.isNew(uid, event)) return;
    try {
      const stackId = await this.stackOfInvolved(involved);
      if (!stackId) return;
      const verdict = this.deps.grants.judge(stackId, { ...involved, namespaced: involved.namespace !== undefined });
      // A stack the grants do not name yet: held back like a frame the channel refused, sent after their next read.
      if (verdict === 'unknown' && this.unsent.size < UNSENT_MAX) this.unsent.set(uid, event);
      if (verdict === 'admit') this.send(uid, event, frameBody(this.deps.agentId, stackId, event, involved));
    } catch (err) {
      this.deps.logger.debug({ err, event: uid }, 'Kubernetes event not streamed');
    }
  }

  /**
   * Not sent in this version yet. An Event never sent and older than the agent's very first start
   * is not backfilled (event times have whole seconds: the first start counts from its second).
   */
  private isNew(uid: string, event: KubeEvent): boolean {
    const { events, firstStart } = this.deps.cursor.cursor;
    if (events[uid] === (event.metadata?.resourceVersion ?? '')) return false;
    if (uid in events) return true;
    return Date.parse(observedAt(event) ?? new Date().toISOString()) >= Math.floor(Date.parse(firstStart) / 1000) * 1000;
  }

  private send(uid: string, event: KubeEvent, body: K8sEventFrameBody): void {
    if (!this.deps.channel.sendTelemetry({ type: 'k8s_event', body })) {
      if (this.unsent.size < UNSENT_MAX) this.unsent.set(uid, event);
      return;
    }
    this.unsent.delete(uid);
    touch(this.deps.cursor.cursor.events, uid, event.metadata?.resourceVersion ?? '');
    this.deps.cursor.changed();
  }

  /** The involved object's own stack marker (read from the cluster, cached per uid). */
  private async stackOfInvolved(involved: Involved) {
    const cached = this.stacks.get(involved.uid);
    if (cached && Date.now() - cached.at < STACK_CACHE_MS) return cached.stack;
    const resource = await this.deps.discovery.resolve(involved.apiVersion, involved.kind);
    const live = resource
      ? await this.deps.objects.get(resource, resource.namespaced ? involved.namespace : undefined, involved.name)
      : undefined;
    // A different uid is a new object under the same name: not the one the event is about.
    const stack = live && live.metadata.uid === involved.uid ? stackOf(live.metadata) : undefined;
    if (this.stacks.size >= STACK_CACHE_MAX) this.stacks.delete(this.stacks.keys().next().value!);
    this.stacks.set(involved.uid, { stack, at: Date.now() });
    return stack;
  }
}

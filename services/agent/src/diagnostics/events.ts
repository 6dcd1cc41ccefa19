import type { DiagnosticEventInfo } from '@brokkr/contracts';

/** The parts of a core/v1 Event that diagnostics read. */
export interface KubeEvent {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  count?: number;
  metadata?: { creationTimestamp?: string };
}

/** What a result's events are about: the pods (by uid), their owners (ReplicaSets, by uid) and the object's own resources (by kind/namespace/name). */
export interface EventSubjects {
  uids: Set<string>;
  /** `<kind>/<namespace>/<name>` (namespace empty for cluster-scoped objects). */
  objects: Set<string>;
}

export const objectKey = (kind: string, namespace: string | undefined, name: string) => `${kind}/${namespace ?? ''}/${name}`;

function involves(event: KubeEvent, subjects: EventSubjects): boolean {
  const o = event.involvedObject;
  if (!o) return false;
  if (o.uid && subjects.uids.has(o.uid)) return true;
  return !!(o.kind && o.name && subjects.objects.has(objectKey(o.kind, o.namespace, o.name)));
}

/** When it last happened: lastTimestamp, else eventTime (events.k8s.io writers), else creation. */
function lastSeen(event: KubeEvent): string | null {
  return event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp ?? null;
}

const time = (event: KubeEvent) => Date.parse(lastSeen(event) ?? '') || 0;

/**
 * The events involving the subjects, newest first (Brokkr sorts by lastTimestamp, null as oldest),
 * at most `max`, in Brokkr's EventInfo shape. Unlike Brokkr's agent (every event of the namespace),
 * only events about this deployment object's resources are kept.
 */
export function eventsAbout(events: readonly KubeEvent[], subjects: EventSubjects, max: number): DiagnosticEventInfo[] {
  return events
    .filter((e) => involves(e, subjects))
    .sort((a, b) => time(b) - time(a))
    .slice(0, max)
    .map((e) => ({
      event_type: e.type ?? null,
      reason: e.reason ?? null,
      message: e.message ?? null,
      involved_object: e.involvedObject?.name ?? 'unknown',
      involved_object_kind: e.involvedObject?.kind ?? null,
      first_timestamp: e.firstTimestamp ?? e.eventTime ?? null,
      last_timestamp: lastSeen(e),
      count: e.count ?? null,
    }));
}

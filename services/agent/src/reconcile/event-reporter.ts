import type { Logger } from '@brokkr/logger';
import type { BrokerClient } from '../broker/client.ts';
import { BrokerError } from '../broker/http.ts';
import type { AgentEventBody, AgentEventRecord, AgentEventStatus, AgentEventType } from '../broker/types.ts';
import type { AgentMetrics } from '../metrics.ts';

type Family = 'apply' | 'delete';

const familyOf = (eventType: string): Family => (eventType === 'DELETED' ? 'delete' : 'apply');

/**
 * One event per deployment object and outcome: a pass that ends as the last one did for that
 * object (resync, retry of the same failure) reports nothing. Posts that fail transiently stay
 * queued and go out with the next flush, in order.
 */
export class EventReporter {
  private readonly last = new Map<string, string>();
  private queue: AgentEventBody[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly broker: BrokerClient,
    private readonly agentId: string,
    private readonly metrics: AgentMetrics,
    private readonly logger: Logger,
  ) {}

  /** What this agent already reported (newest first, as the broker lists them), so a restart repeats nothing. */
  seed(records: AgentEventRecord[]): void {
    for (const r of records) {
      if (!this.last.has(r.deployment_object_id))
        this.last.set(r.deployment_object_id, `${familyOf(r.event_type)}:${r.status.toUpperCase()}`);
    }
  }

  report(objectId: string, eventType: AgentEventType, status: AgentEventStatus, message: string | null = null): void {
    const outcome = `${familyOf(eventType)}:${status}`;
    if (this.last.get(objectId) === outcome) return;
    this.last.set(objectId, outcome);
    this.queue.push({ agent_id: this.agentId, deployment_object_id: objectId, event_type: eventType, status, message });
  }

  /** Forget objects that are neither desired nor live any more, so the map stays bounded. */
  retain(objectIds: Set<string>): void {
    for (const id of this.last.keys()) if (!objectIds.has(id)) this.last.delete(id);
  }

  get pending(): number {
    return this.queue.length;
  }

  /**
   * Posts what is queued, oldest first. The reconcile loop and the heartbeat both flush: a flush
   * asked for while one runs waits for it and then posts what is left, so no event is posted twice
   * (two concurrent loops would both post the head of the queue).
   */
  flush(): Promise<void> {
    const next = this.flushing.then(() => this.drain());
    this.flushing = next.catch(() => undefined);
    return next;
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const event = this.queue[0]!;
      try {
        await this.broker.postEvent(this.agentId, event);
        this.metrics.eventsSent.inc({ status: 'success' });
      } catch (err) {
        this.metrics.eventsSent.inc({ status: 'error' });
        if (err instanceof BrokerError && !err.transient) {
          // e.g. 422 for an object deleted meanwhile: retrying cannot help.
          this.logger.warn({ err, event }, 'event rejected by the broker; dropped');
        } else {
          this.logger.warn({ err }, 'posting events failed; will retry');
          return;
        }
      }
      this.queue.shift();
    }
  }
}

import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

export interface DurableSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  ackWaitMs: number;
  maxDeliver: number;
  maxAckPending: number;
}

type ManagedConsumerConfig = Pick<
  ConsumerConfig,
  'durable_name' | 'ack_policy' | 'deliver_policy' | 'filter_subject' | 'ack_wait' | 'max_deliver' | 'max_ack_pending'
>;

export function consumerConfig(spec: DurableSpec): ManagedConsumerConfig {
  return {
    durable_name: spec.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: spec.filterSubject,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver,
    max_ack_pending: spec.maxAckPending,
  };
}

async function consumerInfo(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
    throw err;
  }
}

function differs(current: ConsumerConfig, wanted: ManagedConsumerConfig): boolean {
  return (Object.keys(wanted) as (keyof ManagedConsumerConfig)[]).some((key) => current[key] !== wanted[key]);
}

async function reconcile(jsm: JetStreamManager, spec: DurableSpec, current: ConsumerInfo): Promise<ConsumerInfo> {
  const wanted = consumerConfig(spec);
  if (!differs(current.config, wanted)) return current;
  // The durable name and deliver/ack policies are fixed at creation; only limits can change.
  const { durable_name: _d, ack_policy: _a, deliver_policy: _p, ...changeable } = wanted;
  return jsm.consumers.update(spec.stream, spec.durable, changeable);
}

/**
 * Creates the durable pull consumer or brings its limits in line. Every replica runs this at
 * start-up; two doing it at once is fine (create with an identical config is idempotent, and a
 * losing racer falls back to an update).
 */
export async function ensureDurable(jsm: JetStreamManager, spec: DurableSpec): Promise<ConsumerInfo> {
  const current = await consumerInfo(jsm, spec.stream, spec.durable);
  if (current) return reconcile(jsm, spec, current);
  try {
    return await jsm.consumers.add(spec.stream, consumerConfig(spec));
  } catch (err) {
    const raced = await consumerInfo(jsm, spec.stream, spec.durable);
    if (!raced) throw err;
    return reconcile(jsm, spec, raced);
  }
}

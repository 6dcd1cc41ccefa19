import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { testOnlyNatsOptions } from '@brokkr/testkit';

export interface StreamMessage<T = unknown> {
  subject: string;
  seq: number;
  /** `Nats-Msg-Id`, when the publisher set one. */
  msgId: string | undefined;
  headers: Record<string, string>;
  data: T;
}

/** Every message currently in a stream (tests only: reads them one by one by sequence). */
export async function readStream<T = unknown>(natsUrl: string, stream: string): Promise<StreamMessage<T>[]> {
  const nc = await connect(testOnlyNatsOptions(natsUrl));
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const out: StreamMessage<T>[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!m) continue;
      const headers: Record<string, string> = {};
      for (const key of m.header?.keys() ?? []) headers[key] = m.header?.get(key) ?? '';
      out.push({ subject: m.subject, seq: m.seq, msgId: headers['Nats-Msg-Id'], headers, data: m.json<T>() });
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Audit entries published to BROKKR_AUDIT (the audit-writer is not running in api tests). */
export interface AuditMessage {
  id: string;
  timestamp: string;
  actor_type: string;
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: Record<string, unknown> | null;
  ip_address: string | null;
  user_agent: string | null;
}

export async function auditMessages(natsUrl: string, action?: string): Promise<AuditMessage[]> {
  const all = await readStream<AuditMessage>(natsUrl, 'BROKKR_AUDIT');
  return all.map((m) => m.data).filter((a) => action === undefined || a.action === action);
}

/** Collects core NATS messages on a subject (e.g. `brokkr.notify.agent.*`) until `close()`. */
export async function collectCore(
  natsUrl: string,
  subject: string,
): Promise<{ messages: { subject: string; data: unknown }[]; close(): Promise<void> }> {
  const nc: NatsConnection = await connect(testOnlyNatsOptions(natsUrl));
  const messages: { subject: string; data: unknown }[] = [];
  nc.subscribe(subject, { callback: (_err, msg) => void messages.push({ subject: msg.subject, data: msg.json() }) });
  await nc.flush();
  return { messages, close: () => nc.close() };
}

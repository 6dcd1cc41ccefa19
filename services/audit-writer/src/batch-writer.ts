import type { Consumer, JsMsg } from '@nats-io/jetstream';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { insertAuditRecords } from '@brokkr/audit';
import { SUBJECTS } from '@brokkr/bus';
import { auditRecordSchema, type AuditRecord } from '@brokkr/contracts';
import type { AuditWriterMetrics } from './metrics.ts';

export interface BatchWriterOptions {
  consumer: Consumer;
  db: Db;
  logger: Logger;
  metrics: AuditWriterMetrics;
  batchSize: number;
  flushIntervalMs: number;
}

/**
 * Pulls up to `batchSize` messages or whatever arrived within `flushIntervalMs`, writes them in one
 * statement, and acknowledges only after the commit. A crash anywhere before the acks means
 * redelivery, which the idempotent insert absorbs: nothing is lost and nothing is doubled.
 */
export class BatchWriter {
  private stopping = false;
  private readonly loop: Promise<void>;

  constructor(private readonly options: BatchWriterOptions) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.writeOneBatch();
      } catch (err) {
        this.options.logger.error({ err }, 'audit batch failed; it will be redelivered');
        this.options.metrics.batchFailures.inc();
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async writeOneBatch(): Promise<void> {
    const { consumer, batchSize, flushIntervalMs } = this.options;
    const messages: JsMsg[] = [];
    const batch = await consumer.fetch({ max_messages: batchSize, expires: Math.max(1000, flushIntervalMs) });
    for await (const m of batch) messages.push(m);
    if (messages.length === 0) return;
    const { entries, valid } = this.parse(messages);
    try {
      const inserted = await insertAuditRecords(this.options.db.pool, entries);
      this.options.metrics.written.inc(inserted);
      this.options.metrics.duplicates.inc(entries.length - inserted);
    } catch (err) {
      for (const m of valid) m.nak(1000);
      throw err;
    }
    await Promise.all(valid.map((m) => m.ackAck().catch(() => false)));
  }

  /** A message that is not an audit entry can never become one: it is terminated, not retried. */
  private parse(messages: JsMsg[]): { entries: AuditRecord[]; valid: JsMsg[] } {
    const entries: AuditRecord[] = [];
    const valid: JsMsg[] = [];
    for (const m of messages) {
      const parsed = auditRecordSchema.safeParse(safeJson(m));
      const problem = parsed.success ? mismatch(m, parsed.data) : 'not an audit entry';
      if (parsed.success && problem === undefined) {
        entries.push(parsed.data);
        valid.push(m);
      } else {
        const issues = parsed.success ? undefined : parsed.error.issues;
        this.options.logger.error({ subject: m.subject, seq: m.seq, problem, issues }, 'dropping a malformed audit message');
        this.options.metrics.malformed.inc();
        m.term();
      }
    }
    return { entries, valid };
  }
}

/**
 * Every hub publisher sends an entry on `brokkr.audit.<its action>` with `Nats-Msg-Id` = its id.
 * Holding the subject to the action is what makes NATS's per-subject permissions per-action: a
 * user allowed only `brokkr.audit.webhook.delivery_failed` (the dispatcher) cannot record a
 * `stack.deleted` (docs/security.md, "The hub's own plumbing").
 */
function mismatch(m: JsMsg, entry: AuditRecord): string | undefined {
  let subject: string;
  try {
    subject = SUBJECTS.audit(entry.action);
  } catch {
    return 'the action cannot be a subject';
  }
  if (m.subject !== subject) return `the subject is not ${subject}`;
  if (m.headers?.get('Nats-Msg-Id') !== entry.id) return 'Nats-Msg-Id is not the entry id';
  return undefined;
}

function safeJson(m: JsMsg): unknown {
  try {
    return m.json();
  } catch {
    return undefined;
  }
}

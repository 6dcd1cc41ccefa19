import { auditWriterConfigSchema } from '@brokkr/config';
import { runHubService } from '@brokkr/runtime';
import { DURABLES, ensureDurable, STREAMS, SUBJECTS } from '@brokkr/bus';
import { BatchWriter } from './batch-writer.ts';
import { auditWriterMetrics } from './metrics.ts';

/** The durable consumer every replica shares: each audit message goes to one replica at a time. */
const DURABLE = DURABLES.auditWriter;

await runHubService({
  name: 'audit-writer',
  schema: auditWriterConfigSchema,
  async start({ config, db, bus, logger, metrics }) {
    await ensureDurable(bus.jsm, {
      stream: STREAMS.audit,
      durable: DURABLE,
      filterSubject: SUBJECTS.auditAll,
      ackWaitMs: 30_000,
      maxDeliver: -1,
      maxAckPending: 10_000,
    });
    const consumer = await bus.js.consumers.get(STREAMS.audit, DURABLE);
    const writer = new BatchWriter({
      consumer,
      db,
      logger,
      metrics: auditWriterMetrics(metrics),
      batchSize: config.BROKKR__AUDIT__BATCH_SIZE,
      flushIntervalMs: config.BROKKR__AUDIT__FLUSH_INTERVAL_MS,
    });
    return { stop: () => writer.stop() };
  },
});

import { metricsFor, type Counter, type Gauge, type Histogram, type Registry } from '@brokkr/telemetry';

export interface RendererMetrics {
  /** One per claimed job: ok, or the failure's reason (invalid, limit, unsupported, timeout, busy); `lost` when its result was not written (the claim was lost or nobody waited any more). */
  renders: Counter<'outcome'>;
  renderDuration: Histogram<'kind'>;
  /** From a job's queueing to its claim. */
  queueWait: Histogram<string>;
  /** Jobs not done, of every renderer version: `pending` (no renderer holds them) and `running`. */
  queueJobs: Gauge<'state'>;
  queueOldestPending: Gauge<string>;
  inFlight: Gauge<string>;
  /** Claims of a job whose earlier claim's renderer was lost (its lease ran out). */
  leaseTakeovers: Counter<string>;
}

const RENDER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createRendererMetrics(registry: Registry): RendererMetrics {
  const m = metricsFor(registry);
  return {
    renders: m.counter({ name: 'brokkr_renderer_renders_total', help: 'Claimed render jobs by outcome', labelNames: ['outcome'] }),
    renderDuration: m.histogram({
      name: 'brokkr_renderer_render_duration_seconds',
      help: 'From claiming a render job to writing its result',
      labelNames: ['kind'],
      buckets: RENDER_BUCKETS,
    }),
    queueWait: m.histogram({
      name: 'brokkr_renderer_queue_wait_seconds',
      help: 'From queueing a render job to its claim',
      buckets: RENDER_BUCKETS,
    }),
    queueJobs: m.gauge({ name: 'brokkr_renderer_queue_jobs', help: 'Render jobs not done, by state', labelNames: ['state'] }),
    queueOldestPending: m.gauge({
      name: 'brokkr_renderer_queue_oldest_pending_seconds',
      help: 'Age of the oldest render job no renderer holds (0: none waits)',
    }),
    inFlight: m.gauge({ name: 'brokkr_renderer_renders_in_flight', help: 'Renders at work in this replica' }),
    leaseTakeovers: m.counter({
      name: 'brokkr_renderer_lease_takeovers_total',
      help: 'Render jobs claimed again after the renderer that held them was lost (lease expired)',
    }),
  };
}

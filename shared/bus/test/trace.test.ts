import { expect } from 'chai';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from '@brokkr/logger';
import { testOnlyBusSettings, useTestInfra } from '@brokkr/testkit';
import {
  connectBus,
  ensureStreams,
  extractTraceContext,
  publishCore,
  publishJson,
  STREAMS,
  SUBJECTS,
  type Bus,
  type Msg,
} from '@brokkr/bus';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** Trace context travels in the stored message's headers, from the publisher to any consumer. */
describe('@brokkr/bus trace propagation', () => {
  const infra = useTestInfra({ db: false, nats: true });
  let bus: Bus;

  before(async () => {
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'bus-trace-test', logger });
    await ensureStreams(bus.jsm);
  });

  after(async () => {
    propagation.disable();
    context.disable();
    await bus?.close();
  });

  const stored = (subject: string) => bus.jsm.streams.getMessage(STREAMS.events, { last_by_subj: subject });

  it('carries an explicit traceparent through the stream', async () => {
    const subject = SUBJECTS.event('trace.explicit');
    await publishJson(bus.js, subject, { hello: 'world' }, { msgID: 'trace-1', traceparent: TRACEPARENT, headers: { 'x-extra': 'yes' } });
    const m = await stored(subject);
    expect(m?.header.get('traceparent')).to.equal(TRACEPARENT);
    expect(m?.header.get('Nats-Msg-Id')).to.equal('trace-1');
    expect(m?.header.get('x-extra')).to.equal('yes');
    expect(m?.json()).to.deep.equal({ hello: 'world' });
  });

  /** The next core message on `subject` after `publish` ran. */
  async function nextCoreMessage(subject: string, publish: () => void): Promise<Msg> {
    const sub = bus.nc.subscribe(subject, { max: 1 });
    await bus.nc.flush();
    publish();
    for await (const m of sub) return m;
    throw new Error('subscription closed without a message');
  }

  it('sends a hint without headers when there is no trace context', async () => {
    const m = await nextCoreMessage('hint.plain', () => publishCore(bus.nc, 'hint.plain', { a: 1 }));
    expect(m.headers).to.equal(undefined);
    expect(m.json()).to.deep.equal({ a: 1 });
  });

  it('injects the active span context and extracts it on the other side', async () => {
    // What the telemetry SDK registers; without it injection is a no-op.
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const subject = SUBJECTS.event('trace.active');
    const spanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };
    const active = trace.setSpanContext(ROOT_CONTEXT, spanContext);
    await context.with(active, () => publishJson(bus.js, subject, {}, { msgID: 'trace-2' }));
    const m = await stored(subject);
    expect(m?.header.get('traceparent')).to.equal('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const extracted = trace.getSpanContext(extractTraceContext(m?.header));
    expect(extracted?.traceId).to.equal(spanContext.traceId);
    expect(extracted?.spanId).to.equal(spanContext.spanId);
    expect(extracted?.isRemote).to.equal(true);
  });

  it('sends a hint with the active trace context (publishCore)', async () => {
    // The propagator and context manager registered by the test above stay until `after`.
    const spanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };
    const active = trace.setSpanContext(ROOT_CONTEXT, spanContext);
    const m = await nextCoreMessage('hint.traced', () => context.with(active, () => publishCore(bus.nc, 'hint.traced')));
    expect(m.headers?.get('traceparent')).to.equal('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
  });
});

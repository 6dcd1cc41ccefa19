import { expect } from 'chai';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from '@brokkr/logger';
import { useTestInfra } from '@brokkr/testkit';
import { connectBus, ensureStreams, extractTraceContext, publishJson, STREAMS, SUBJECTS, type Bus } from '@brokkr/bus';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** Trace context travels in the stored message's headers, from the publisher to any consumer. */
describe('@brokkr/bus trace propagation', () => {
  const infra = useTestInfra({ db: false, nats: true });
  let bus: Bus;

  before(async () => {
    bus = await connectBus({ url: infra.nats.url, name: 'bus-trace-test', logger });
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
});

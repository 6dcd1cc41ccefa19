import { expect } from 'chai';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from '@brokkr/logger';
import { eventually, startTestNats } from '@brokkr/testkit';
import {
  connectBus,
  consumeDurable,
  ensureStreams,
  extractTraceContext,
  publishJson,
  STREAMS,
  SUBJECTS,
  type Bus,
  type DurableConsumerHandle,
  type JsMsg,
} from '@brokkr/bus';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('@brokkr/bus consumeDurable', () => {
  let nats: Awaited<ReturnType<typeof startTestNats>>;
  let bus: Bus;
  const handles: DurableConsumerHandle[] = [];

  before(async () => {
    nats = await startTestNats();
    bus = await connectBus({ url: nats.url, name: 'bus-consume-test', logger });
    await ensureStreams(bus.jsm);
  });

  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.stop()));
  });

  after(async () => {
    propagation.disable();
    context.disable();
    await bus?.close();
    await nats?.stop();
  });

  async function consume(durable: string, subject: string, handler: (m: JsMsg) => Promise<void>): Promise<DurableConsumerHandle> {
    const handle = await consumeDurable({
      js: bus.js,
      jsm: bus.jsm,
      stream: STREAMS.events,
      durable,
      filterSubject: subject,
      handler,
      logger,
      maxMessages: 4,
      ackWaitMs: 30_000,
    });
    handles.push(handle);
    return handle;
  }

  it('carries an explicit traceparent through the stream', async () => {
    const subject = SUBJECTS.event('trace.explicit');
    const received: JsMsg[] = [];
    await consume('trace-explicit', subject, async (m) => {
      received.push(m);
      m.ack();
    });
    await publishJson(bus.js, subject, { hello: 'world' }, { msgID: 'trace-1', traceparent: TRACEPARENT, headers: { 'x-extra': 'yes' } });
    const [m] = await eventually(() => (received.length === 1 ? received : undefined), { what: 'the message' });
    expect(m!.headers?.get('traceparent')).to.equal(TRACEPARENT);
    expect(m!.headers?.get('Nats-Msg-Id')).to.equal('trace-1');
    expect(m!.headers?.get('x-extra')).to.equal('yes');
    expect(m!.json()).to.deep.equal({ hello: 'world' });
  });

  it('injects the active span context and extracts it on the other side', async () => {
    // What the telemetry SDK registers; without it injection is a no-op.
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const subject = SUBJECTS.event('trace.active');
    const received: JsMsg[] = [];
    await consume('trace-active', subject, async (m) => {
      received.push(m);
      m.ack();
    });
    const spanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };
    const active = trace.setSpanContext(ROOT_CONTEXT, spanContext);
    await context.with(active, () => publishJson(bus.js, subject, {}, { msgID: 'trace-2' }));
    const [m] = await eventually(() => (received.length === 1 ? received : undefined), { what: 'the message' });
    expect(m!.headers?.get('traceparent')).to.equal('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const extracted = trace.getSpanContext(extractTraceContext(m!.headers));
    expect(extracted?.traceId).to.equal(spanContext.traceId);
    expect(extracted?.spanId).to.equal(spanContext.spanId);
    expect(extracted?.isRemote).to.equal(true);
  });

  it('hands every message to exactly one of two replicas sharing a durable', async () => {
    const subject = SUBJECTS.event('shared.work');
    const seen: { replica: string; id: number }[] = [];
    const handler = (replica: string) => async (m: JsMsg) => {
      seen.push({ replica, id: (m.json() as { id: number }).id });
      m.ack();
    };
    await consume('shared-work', subject, handler('a'));
    await consume('shared-work', subject, handler('b'));
    const total = 60;
    await Promise.all(Array.from({ length: total }, (_, id) => publishJson(bus.js, subject, { id }, { msgID: `shared-${id}` })));
    await eventually(() => seen.length >= total, { what: `${total} messages` });
    // Give a stray redelivery a chance to show up before counting.
    await eventually(async () => (await bus.jsm.consumers.info(STREAMS.events, 'shared-work')).num_ack_pending === 0);
    const ids = seen.map((s) => s.id).sort((x, y) => x - y);
    expect(ids).to.deep.equal(Array.from({ length: total }, (_, i) => i));
  });

  it('redelivers a message whose handler threw', async () => {
    const subject = SUBJECTS.event('retry.me');
    const deliveries: number[] = [];
    await consume('retry-me', subject, async (m) => {
      deliveries.push(m.info.deliveryCount);
      if (m.info.deliveryCount === 1) throw new Error('transient');
      m.ack();
    });
    await publishJson(bus.js, subject, {}, { msgID: 'retry-1' });
    await eventually(() => deliveries.length === 2, { what: 'a redelivery' });
    expect(deliveries).to.deep.equal([1, 2]);
  });

  it('stop() waits for the in-flight handler', async () => {
    const subject = SUBJECTS.event('slow.work');
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handle = await consume('slow-work', subject, async (m) => {
      order.push('handler started');
      await gate;
      await m.ackAck();
      order.push('handler finished');
    });
    await publishJson(bus.js, subject, {}, { msgID: 'slow-1' });
    await eventually(() => order.includes('handler started'), { what: 'the handler to start' });
    const stopped = handle.stop().then(() => order.push('stopped'));
    // Let the stop request travel through the event loop; it must still be waiting on the handler.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(order).to.deep.equal(['handler started']);
    release();
    await stopped;
    expect(order).to.deep.equal(['handler started', 'handler finished', 'stopped']);
    const info = await bus.jsm.consumers.info(STREAMS.events, 'slow-work');
    expect(info.num_ack_pending).to.equal(0);
  });
});

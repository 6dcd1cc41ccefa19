export { connectBus, type Bus, type BusSettings } from './connect.ts';
export { STREAMS, SUBJECTS } from './subjects.ts';
export { ensureStreams, streamConfigs, type EnsureStreamsOptions, type ManagedStreamConfig, type StreamLimits } from './streams.ts';
export { publishJson, publishCore, type PublishJsonOptions } from './publish.ts';
export { publishOutboxRows, type OutboxPublishResult, type PublishableOutboxRow } from './publish-outbox.ts';
export { extractTraceContext, injectTraceContext, currentTraceparent, TRACEPARENT, TRACESTATE } from './trace.ts';
export { ensureDurable, type DurableSpec } from './consumer-config.ts';
export type { JsMsg, PubAck, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
export type { NatsConnection, Msg, MsgHdrs } from '@nats-io/transport-node';

export { connectBus, connectNats, type Bus, type BusSettings, type CoreConnection } from './connect.ts';
export { DURABLES, STREAMS, SUBJECTS } from './subjects.ts';
export {
  AUDITED_BY,
  HUB_NATS_USERS,
  hubNatsServer,
  NATS_PERMISSIONS,
  NATS_USERS,
  natsAuthorizationConfig,
  natsInboxPrefix,
  natsPasswordEnv,
  natsPasswordVariable,
  newNatsPassword,
  newNatsPasswords,
  type ExtraNatsUser,
  type HubNatsUser,
  type NatsPermissions,
  type NatsUser,
  type SubjectRules,
} from './permissions.ts';
export { ensureStreams, streamConfigs, type EnsureStreamsOptions, type ManagedStreamConfig, type StreamLimits } from './streams.ts';
export { publishJson, publishCore, type PublishJsonOptions } from './publish.ts';
export { AckPublisher, ackPublisherFor, type AckPublishOptions, type AckPublisherOptions } from './ack-publisher.ts';
export { PublishAckError, type PublishFailure } from './publish-error.ts';
export { NOTICE_ORIGIN_HEADER, sendAgentNotices, type NoticeReason } from './agent-notices.ts';
export { publishOutboxRows, type OutboxPublishResult, type PublishableOutboxRow } from './publish-outbox.ts';
export { extractTraceContext, injectTraceContext, traceHeaders, currentTraceparent, TRACEPARENT, TRACESTATE } from './trace.ts';
export { ensureDurable, type DurableSpec } from './consumer-config.ts';
export type { JsMsg, PubAck, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
export type { NatsConnection, Msg, MsgHdrs } from '@nats-io/transport-node';

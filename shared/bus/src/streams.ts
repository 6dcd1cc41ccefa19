import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { STREAMS, SUBJECTS } from './subjects.ts';

const MIB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface StreamLimits {
  maxBytes?: number;
  maxAgeMs?: number;
}

export interface EnsureStreamsOptions {
  events?: StreamLimits;
  audit?: StreamLimits;
}

/** What we manage on a stream; everything else keeps the server's default. */
export type ManagedStreamConfig = Pick<
  StreamConfig,
  'name' | 'subjects' | 'retention' | 'storage' | 'discard' | 'max_age' | 'max_bytes' | 'max_msg_size' | 'duplicate_window' | 'num_replicas'
>;

// The duplicate window bounds how late a retried publish (outbox relay, api retry) can still be
// recognised by its Nats-Msg-Id; the relay republishes after seconds, so 2 minutes is ample.
const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;
// nats-server's default max_payload is 1 MiB; a bigger per-message limit could never be reached.
const MAX_MSG_SIZE = MIB;

function streamConfig(name: string, subject: string, limits: StreamLimits, defaults: Required<StreamLimits>): ManagedStreamConfig {
  return {
    name,
    subjects: [subject],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    // Old events go first: consumers that fall this far behind are re-synced from Postgres.
    discard: DiscardPolicy.Old,
    max_age: nanos(limits.maxAgeMs ?? defaults.maxAgeMs),
    max_bytes: limits.maxBytes ?? defaults.maxBytes,
    max_msg_size: MAX_MSG_SIZE,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: 1,
  };
}

/** The configuration `ensureStreams` provisions (exported for tests and for documentation). */
export function streamConfigs(options: EnsureStreamsOptions = {}): ManagedStreamConfig[] {
  return [
    streamConfig(STREAMS.events, SUBJECTS.eventsAll, options.events ?? {}, { maxAgeMs: 7 * DAY_MS, maxBytes: 1024 * MIB }),
    streamConfig(STREAMS.audit, SUBJECTS.auditAll, options.audit ?? {}, { maxAgeMs: 7 * DAY_MS, maxBytes: 512 * MIB }),
  ];
}

function differs(current: StreamConfig, wanted: ManagedStreamConfig): boolean {
  return (Object.keys(wanted) as (keyof ManagedStreamConfig)[]).some((key) => JSON.stringify(current[key]) !== JSON.stringify(wanted[key]));
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined;
    throw err;
  }
}

async function ensureStream(jsm: JetStreamManager, wanted: ManagedStreamConfig): Promise<StreamInfo> {
  const current = await streamInfo(jsm, wanted.name);
  if (current === undefined) {
    try {
      return await jsm.streams.add(wanted);
    } catch (err) {
      // Another replica created it between our info and add; fall through to the update check.
      const raced = await streamInfo(jsm, wanted.name);
      if (raced === undefined) throw err;
      return differs(raced.config, wanted) ? updateStream(jsm, wanted) : raced;
    }
  }
  return differs(current.config, wanted) ? updateStream(jsm, wanted) : current;
}

function updateStream(jsm: JetStreamManager, wanted: ManagedStreamConfig): Promise<StreamInfo> {
  // name, retention and storage cannot change on a live stream; the server rejects such an update.
  const { name, retention: _retention, storage: _storage, ...changeable } = wanted;
  return jsm.streams.update(name, changeable);
}

/**
 * Creates BROKKR_EVENTS and BROKKR_AUDIT, or brings their limits in line. Idempotent and safe to
 * run from every replica at start-up.
 */
export async function ensureStreams(jsm: JetStreamManager, options: EnsureStreamsOptions = {}): Promise<StreamInfo[]> {
  const infos: StreamInfo[] = [];
  for (const wanted of streamConfigs(options)) infos.push(await ensureStream(jsm, wanted));
  return infos;
}

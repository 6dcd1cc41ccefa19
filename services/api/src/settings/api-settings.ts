import { apiConfigSchema, natsSettingsFrom, parseEnv, type ApiConfig, type NatsSettings } from '@brokkr/config';
import { sourcePolicyFromConfig, type SourcePolicy } from '@brokkr/sources';
import type { UnknownPakLimits } from '../auth/unknown-paks.ts';
import type { ProxyTrust } from '../auth/client-info.ts';

/**
 * The api's settings in the names and units the code uses. The environment keeps Brokkr's
 * `BROKKR__SECTION__KEY` names; this is the one place that reads them.
 */
export interface ApiSettings {
  log: { level: ApiConfig['BROKKR__LOG__LEVEL']; format: ApiConfig['BROKKR__LOG__FORMAT'] };
  database: { url: string; schema: string | undefined; poolSize: number };
  /** The server, credentials and TLS (BROKKR__NATS__*). */
  nats: NatsSettings;
  telemetry: { enabled: boolean; serviceName: string; otlpEndpoint: string; samplingRate: number };
  http: {
    host: string;
    port: number;
    /** The metrics listener (every series, agent names included); 0 = not started. */
    metricsPort: number;
    /** Request bodies above this are refused with 413. */
    bodyLimitBytes: number;
    /** Whose X-Forwarded-For is believed; nobody's by default (auth/client-info.ts). */
    proxyTrust: ProxyTrust;
  };
  /** Brokkr's `[cors]` section: comma lists, `*` for any origin. */
  cors: { allowedOrigins: string; allowedMethods: string; allowedHeaders: string; maxAgeSeconds: number };
  adminPak: {
    /** 64 hex = use it; '' = mint a new admin PAK on the first start. */
    configuredHash: string;
    /** Where a minted admin PAK is written. */
    file: string;
  };
  authCacheTtlSeconds: number;
  /** What one tenant may hold or ask for (docs/security.md, "Denial of service by an authenticated tenant"). */
  limits: TenantLimits;
  /** The longest a target-state long-poll is held. */
  longPollMaxSeconds: number;
  /** Told to polling agents with every target-state answer (`Brokkr-Poll-Interval`); 0 = not told. */
  agentPollSeconds: number;
  /** RSS above which the api, once quiet, gives memory back to the OS; 0 = never (ADR 0030). */
  memoryReleaseAboveBytes: number;
  webhooks: {
    /** 64 hex characters; absent or '' = a random per-process key (refused while subscriptions exist). */
    encryptionKey: string | undefined;
    /** Lets test sends reach loopback and private addresses (the SSRF guard is on by default). */
    allowPrivateNetworks: boolean;
    /** Upper bound of the retry backoff of agent-delivered webhooks (the dispatcher's policy). */
    maxBackoffSeconds: number;
  };
  /** Where charts and overlays may be fetched from, and how much of them (BROKKR__BROKER__SOURCE_*). */
  sources: SourcePolicy;
  /** Charts and overlays, rendered by the renderer service: how long a render may take from queueing to result. */
  rendering: { waitSeconds: number };
}

export interface TenantLimits {
  /** The largest message an agent may send on `/internal/ws/agent` (1009 above it). */
  agentChannelMaxMessageBytes: number;
  /** Open streams per PAK on one replica, by kind (429 above it). */
  streamsPerPak: { websocket: number; event_stream: number; long_poll: number };
  /** The most entries a list of YAML-bearing rows answers at once. */
  listMaxItems: number;
  /** Unknown-PAK lookups per client address (`burst`, refilled at `perMinute`), and how long an unknown hash is remembered. */
  unknownPak: UnknownPakLimits;
}

export function settingsFrom(config: ApiConfig): ApiSettings {
  return {
    log: { level: config.BROKKR__LOG__LEVEL, format: config.BROKKR__LOG__FORMAT },
    database: { url: config.BROKKR__DATABASE__URL, schema: config.BROKKR__DATABASE__SCHEMA, poolSize: config.BROKKR__DATABASE__POOL_SIZE },
    nats: natsSettingsFrom(config),
    telemetry: {
      enabled: config.BROKKR__TELEMETRY__ENABLED,
      serviceName: config.BROKKR__TELEMETRY__SERVICE_NAME ?? 'brokkr-api',
      otlpEndpoint: config.BROKKR__TELEMETRY__OTLP_ENDPOINT,
      samplingRate: config.BROKKR__TELEMETRY__SAMPLING_RATE,
    },
    http: {
      host: config.BROKKR__BROKER__HOST,
      port: config.BROKKR__BROKER__PORT,
      metricsPort: config.BROKKR__BROKER__METRICS_PORT,
      bodyLimitBytes: config.BROKKR__BROKER__BODY_LIMIT_BYTES,
      proxyTrust: {
        trustEveryHop: config.BROKKR__BROKER__TRUST_PROXY,
        trustedProxies: config.BROKKR__BROKER__TRUSTED_PROXIES.split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry !== ''),
      },
    },
    cors: {
      allowedOrigins: config.BROKKR__CORS__ALLOWED_ORIGINS,
      allowedMethods: config.BROKKR__CORS__ALLOWED_METHODS,
      allowedHeaders: config.BROKKR__CORS__ALLOWED_HEADERS,
      maxAgeSeconds: config.BROKKR__CORS__MAX_AGE_SECONDS,
    },
    adminPak: { configuredHash: config.BROKKR__BROKER__PAK_HASH, file: config.BROKKR__BROKER__PAK_FILE },
    authCacheTtlSeconds: config.BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS,
    limits: {
      agentChannelMaxMessageBytes: config.BROKKR__BROKER__AGENT_CHANNEL_MAX_MESSAGE_BYTES,
      streamsPerPak: {
        websocket: config.BROKKR__BROKER__MAX_WEBSOCKETS_PER_PAK,
        event_stream: config.BROKKR__BROKER__MAX_EVENT_STREAMS_PER_PAK,
        long_poll: config.BROKKR__BROKER__MAX_LONG_POLLS_PER_PAK,
      },
      listMaxItems: config.BROKKR__BROKER__LIST_MAX_ITEMS,
      unknownPak: {
        burst: config.BROKKR__BROKER__UNKNOWN_PAK_BURST,
        perMinute: config.BROKKR__BROKER__UNKNOWN_PAK_PER_MINUTE,
        negativeTtlMs: config.BROKKR__BROKER__UNKNOWN_PAK_CACHE_SECONDS * 1000,
      },
    },
    longPollMaxSeconds: config.BROKKR__BROKER__LONG_POLL_MAX_SECONDS,
    agentPollSeconds: config.BROKKR__BROKER__AGENT_POLL_SECONDS,
    memoryReleaseAboveBytes: config.BROKKR__BROKER__MEMORY_RELEASE_ABOVE_MIB * 1024 * 1024,
    sources: sourcePolicyFromConfig(config),
    rendering: { waitSeconds: config.BROKKR__BROKER__RENDER_WAIT_SECONDS },
    webhooks: {
      encryptionKey: config.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY,
      allowPrivateNetworks: config.BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      maxBackoffSeconds: config.BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS,
    },
  };
}

/** Reads the environment once; throws a ConfigError naming every bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): ApiSettings {
  return settingsFrom(parseEnv(apiConfigSchema, env));
}

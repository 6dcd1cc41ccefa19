import { z } from 'zod';
import { isAddressOrCidr } from '../addresses.ts';
import { database, int, log, nats, port, telemetry, bool, optionalBool } from '../fields.ts';

/** A host name or `*.` and a domain: what BROKKR__BROKER__SOURCE_ALLOWED_HOSTS may list. */
const HOST_PATTERN =
  /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/;

/** Brokkr's public default admin hash (its PAK is published in Brokkr's docs). */
export const DEFAULT_ADMIN_PAK_HASH = '4c697273df3d764cba950bb5c04368097685f09259f5bd880d892cf1ff9f4cdd';

export const apiConfigSchema = z.object({
  ...database,
  ...log,
  ...nats,
  ...telemetry,
  BROKKR__BROKER__PORT: port(3000),
  BROKKR__BROKER__HOST: z.string().default('0.0.0.0'),
  /** A second listener (same host) with /metrics including the per-agent series, /healthz and /readyz; 0 = none. */
  BROKKR__BROKER__METRICS_PORT: port(0),
  /** 64 hex = use it; "" = mint a new admin PAK on first start; unset = Brokkr's public default (warned about). */
  BROKKR__BROKER__PAK_HASH: z
    .union([z.literal(''), z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters or empty')])
    .default(DEFAULT_ADMIN_PAK_HASH),
  /** Where a minted admin PAK is written (mode 0600). */
  BROKKR__BROKER__PAK_FILE: z.string().default('/tmp/brokkr-keys/key.txt'),
  BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS: int(60, 0, 86400),
  BROKKR__BROKER__BODY_LIMIT_BYTES: int(2 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64})?$/, 'must be 64 hexadecimal characters')
    .optional(),
  /** Lets webhook tests reach loopback/private receivers (the SSRF guard is on by default). */
  BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool(false),
  /**
   * Charts and kustomize archives fetched at submit (@brokkr/sources, docs/security.md "Fetching
   * charts and overlays"). Private addresses: unset follows WEBHOOK_ALLOW_PRIVATE_NETWORKS.
   */
  BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: optionalBool,
  /** Comma list of addresses or CIDRs sources may reach even while private networks are refused. */
  BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS: z
    .string()
    .default('')
    .refine(
      (v) => v.split(',').every((entry) => entry.trim() === '' || isAddressOrCidr(entry.trim())),
      'must be a comma list of IP addresses or CIDRs',
    ),
  /** Comma list of host names (`*.example.com` for subdomains) sources may come from; empty: any public host. */
  BROKKR__BROKER__SOURCE_ALLOWED_HOSTS: z
    .string()
    .default('')
    .refine(
      (v) => v.split(',').every((entry) => entry.trim() === '' || HOST_PATTERN.test(entry.trim())),
      'must be a comma list of host names (or *.domain)',
    ),
  /** The largest chart, kustomize archive or repository index.yaml the hub fetches. */
  BROKKR__BROKER__SOURCE_MAX_BYTES: int(10 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  /** How long fetching one source may take, redirects and token requests included. */
  BROKKR__BROKER__SOURCE_TIMEOUT_SECONDS: int(30, 1, 600),
  /**
   * How long a chart or overlay render may take, from queueing it for the renderer service to its
   * result (docs/adr/0046); past it the request is answered 503 `renderer_busy`. Charts and overlays
   * are refused with 503 `renderer_unavailable` while no renderer runs (plain YAML needs none).
   */
  BROKKR__BROKER__RENDER_WAIT_SECONDS: int(30, 1, 300),
  /** Upper bound of the retry backoff of agent-delivered webhooks (the same setting and policy as the dispatcher's). */
  BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS: int(3600, 1, 86400),
  BROKKR__BROKER__LONG_POLL_MAX_SECONDS: int(60, 0, 300),
  /**
   * How often agents that poll should ask for their target state, sent with every target-state
   * answer as `Brokkr-Poll-Interval` (seconds; our agent follows it, ±20 %); 0 = not sent.
   */
  BROKKR__BROKER__AGENT_POLL_SECONDS: int(0, 0, 3600),
  /** true: every hop is a trusted proxy, so the client is X-Forwarded-For's first entry (Brokkr's rule, spoofable unless the proxy overwrites the header). */
  BROKKR__BROKER__TRUST_PROXY: bool(false),
  /** Comma list of proxy addresses or CIDRs whose X-Forwarded-For is believed; unset and TRUST_PROXY false: the socket's address. */
  BROKKR__BROKER__TRUSTED_PROXIES: z
    .string()
    .default('')
    .refine(
      (v) => v.split(',').every((entry) => entry.trim() === '' || isAddressOrCidr(entry.trim())),
      'must be a comma list of IP addresses or CIDRs',
    ),
  /** Tenant limits (docs/security.md, "Denial of service by an authenticated tenant"). */
  BROKKR__BROKER__AGENT_CHANNEL_MAX_MESSAGE_BYTES: int(1024 * 1024, 4096, 64 * 1024 * 1024),
  BROKKR__BROKER__MAX_WEBSOCKETS_PER_PAK: int(16, 1, 10_000),
  BROKKR__BROKER__MAX_EVENT_STREAMS_PER_PAK: int(8, 1, 10_000),
  BROKKR__BROKER__MAX_LONG_POLLS_PER_PAK: int(16, 1, 10_000),
  /** The most entries a list of YAML-bearing rows answers at once (and the largest `limit`). */
  BROKKR__BROKER__LIST_MAX_ITEMS: int(1000, 1, 100_000),
  /** Unknown-PAK lookups one client address gets: a burst, refilled at a rate per minute. */
  BROKKR__BROKER__UNKNOWN_PAK_BURST: int(60, 1, 100_000),
  BROKKR__BROKER__UNKNOWN_PAK_PER_MINUTE: int(60, 1, 1_000_000),
  /** How long a PAK that matched nobody is answered 401 without a database lookup; 0 = not remembered. */
  BROKKR__BROKER__UNKNOWN_PAK_CACHE_SECONDS: int(5, 0, 3600),
  /** RSS (MiB) above which a quiet api gives a load peak's memory back to the OS (ADR 0030); 0 = never. */
  BROKKR__BROKER__MEMORY_RELEASE_ABOVE_MIB: int(128, 0, 1024 * 1024),
  BROKKR__CORS__ALLOWED_ORIGINS: z.string().default('http://localhost:3001'),
  BROKKR__CORS__ALLOWED_METHODS: z.string().default('GET,POST,PUT,PATCH,DELETE,OPTIONS'),
  BROKKR__CORS__ALLOWED_HEADERS: z.string().default('Authorization,Content-Type'),
  BROKKR__CORS__MAX_AGE_SECONDS: int(3600),
});
export type ApiConfig = z.output<typeof apiConfigSchema>;

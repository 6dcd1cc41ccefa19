import { z } from 'zod';

/** Building blocks for the per-service schemas; names follow Brokkr's BROKKR__SECTION__KEY scheme. */

export const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'TRUE', 'FALSE', 'True', 'False'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => ['true', '1', 'yes'].includes(v.toLowerCase()));

/** A boolean that may be left unset (undefined), for a setting that follows another one by default. */
export const optionalBool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'TRUE', 'FALSE', 'True', 'False'])
  .optional()
  .transform((v) => (v === undefined ? undefined : ['true', '1', 'yes'].includes(v.toLowerCase())));

export const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const port = (fallback: number) => int(fallback, 0, 65535);

export const hex64 = z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters');

/** A Postgres schema name: an unquoted identifier, so it can be interpolated safely. */
export const schemaName = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier (a-z, 0-9, _; at most 63 characters)');

export const database = {
  BROKKR__DATABASE__URL: z.string().url('must be a postgres:// URL').default('postgres://brokkr:brokkr@localhost:5433/brokkr'),
  BROKKR__DATABASE__SCHEMA: schemaName.optional(),
  BROKKR__DATABASE__POOL_SIZE: int(20, 1, 500),
};

export const log = {
  BROKKR__LOG__LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  BROKKR__LOG__FORMAT: z.enum(['json', 'text']).default('json'),
};

const path = z.string().min(1);

/** The NATS server and how to prove who we are to it (nats.ts turns these into one NatsSettings). */
export const nats = {
  BROKKR__NATS__URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  BROKKR__NATS__USER: z.string().min(1).optional(),
  BROKKR__NATS__PASSWORD: z.string().min(1).optional(),
  BROKKR__NATS__TOKEN: z.string().min(1).optional(),
  /** A file holding the user's NKey seed (`SU…`). */
  BROKKR__NATS__NKEY_SEED_FILE: path.optional(),
  /** A `.creds` file (user JWT and NKey seed, decentralised auth). */
  BROKKR__NATS__CREDS_FILE: path.optional(),
  /** Any TLS_* set: TLS is required; the CA verifies the server, the cert and key prove the client. */
  BROKKR__NATS__TLS_CA_FILE: path.optional(),
  BROKKR__NATS__TLS_CERT_FILE: path.optional(),
  BROKKR__NATS__TLS_KEY_FILE: path.optional(),
};

export const telemetry = {
  BROKKR__TELEMETRY__ENABLED: bool(false),
  BROKKR__TELEMETRY__OTLP_ENDPOINT: z.string().url().default('http://localhost:4318'),
  BROKKR__TELEMETRY__SERVICE_NAME: z.string().optional(),
  BROKKR__TELEMETRY__SAMPLING_RATE: z.coerce.number().min(0).max(1).default(0.1),
};

/** Health/metrics port for services without an HTTP API. */
export const health = (fallback: number) => ({ BROKKR__HEALTH__PORT: port(fallback) });

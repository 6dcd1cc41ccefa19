import type { z } from 'zod';
import { ConfigError } from '@brokkr/errors';
import type { nats } from './fields.ts';

export type NatsConfig = z.output<z.ZodObject<typeof nats>>;

/** One way of authenticating to NATS; none = an open server. */
export type NatsAuth = { user: string; password: string } | { token: string } | { nkeySeedFile: string } | { credsFile: string };

export interface NatsTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** What @brokkr/bus needs to reach NATS: every hub service reads it from the same variables. */
export interface NatsSettings {
  /** One URL or a comma-separated list. */
  url: string;
  auth?: NatsAuth;
  /** Set: the connection must be TLS. */
  tls?: NatsTls;
}

function authFrom(config: NatsConfig, problems: string[]): NatsAuth | undefined {
  const { BROKKR__NATS__USER: user, BROKKR__NATS__PASSWORD: password } = config;
  if ((user === undefined) !== (password === undefined))
    problems.push('BROKKR__NATS__USER and BROKKR__NATS__PASSWORD: set both or neither');
  const ways: NatsAuth[] = [
    ...(user !== undefined && password !== undefined ? [{ user, password }] : []),
    ...(config.BROKKR__NATS__TOKEN === undefined ? [] : [{ token: config.BROKKR__NATS__TOKEN }]),
    ...(config.BROKKR__NATS__NKEY_SEED_FILE === undefined ? [] : [{ nkeySeedFile: config.BROKKR__NATS__NKEY_SEED_FILE }]),
    ...(config.BROKKR__NATS__CREDS_FILE === undefined ? [] : [{ credsFile: config.BROKKR__NATS__CREDS_FILE }]),
  ];
  if (ways.length > 1) problems.push('BROKKR__NATS__: set one of USER/PASSWORD, TOKEN, NKEY_SEED_FILE or CREDS_FILE');
  return ways[0];
}

function tlsFrom(config: NatsConfig, problems: string[]): NatsTls | undefined {
  const { BROKKR__NATS__TLS_CA_FILE: caFile, BROKKR__NATS__TLS_CERT_FILE: certFile, BROKKR__NATS__TLS_KEY_FILE: keyFile } = config;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    problems.push('BROKKR__NATS__TLS_CERT_FILE and BROKKR__NATS__TLS_KEY_FILE: set both or neither');
  }
  if (caFile === undefined && certFile === undefined && keyFile === undefined) return undefined;
  return { ...(caFile ? { caFile } : {}), ...(certFile ? { certFile } : {}), ...(keyFile ? { keyFile } : {}) };
}

/** The NATS settings of a parsed service config; a ConfigError names every half-given pair. */
export function natsSettingsFrom(config: NatsConfig): NatsSettings {
  const problems: string[] = [];
  const auth = authFrom(config, problems);
  const tls = tlsFrom(config, problems);
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  - ${problems.join('\n  - ')}`, problems);
  return { url: config.BROKKR__NATS__URL, ...(auth ? { auth } : {}), ...(tls ? { tls } : {}) };
}

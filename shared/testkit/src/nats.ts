import { startNats, type NatsHandle } from '@brokkr/infra';
import {
  HUB_NATS_USERS,
  natsAuthorizationConfig,
  natsInboxPrefix,
  natsPasswordEnv,
  newNatsPassword,
  newNatsPasswords,
  type HubNatsUser,
  type NatsUser,
} from '@brokkr/bus';
import { timedStop, usingInfrastructure } from './tier.ts';

/**
 * The tests' own user: every subject, both ways. Only test servers know it (the configurations
 * `npm start`, compose and the chart run have no such user); a test uses it where it publishes or
 * subscribes as "the test" rather than as a service.
 */
export const TEST_ONLY_NATS_USER = 'test-only-all-subjects';

export type TestNatsUser = NatsUser | typeof TEST_ONLY_NATS_USER;

/** A nats-server of a test: the hub's users and permissions, as `npm start` runs it, plus the test-only user. */
export interface TestNatsHandle extends NatsHandle {
  /** Every user's password on this server. */
  passwords: Readonly<Record<TestNatsUser, string>>;
}

/** The servers this process started, by URL: spawnService and the helpers below find their passwords here. */
const servers = new Map<string, Readonly<Record<TestNatsUser, string>>>();

const testOnlyUser = { user: TEST_ONLY_NATS_USER, permissions: { publish: { allow: ['>'] }, subscribe: { allow: ['>'] } } };

/**
 * Every test file gets its own nats-server (about 100 ms to start): streams and durable consumers
 * are then isolated without prefixing any subject, so tests exercise the real names. It runs the
 * hub's authorization (each service its own user and permissions, no anonymous access) with fresh
 * passwords, or the given ones (a restart keeps them).
 */
export async function startTestNats(
  options: { port?: number; storeDir?: string; passwords?: Readonly<Record<TestNatsUser, string>> } = {},
): Promise<TestNatsHandle> {
  const passwords = options.passwords ?? { ...newNatsPasswords(), [TEST_ONLY_NATS_USER]: newNatsPassword() };
  const handle = await usingInfrastructure('nats-server', () =>
    startNats({
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.storeDir === undefined ? {} : { storeDir: options.storeDir }),
      config: natsAuthorizationConfig({ extraUsers: [testOnlyUser] }),
      env: natsPasswordEnv(passwords),
    }),
  );
  // Kept after stop: a test may stop the server and start a service against it before it restarts.
  servers.set(handle.url, passwords);
  return { ...handle, stop: timedStop('nats-server', handle.stop), passwords };
}

function passwordOf(nats: string | NatsHandle, user: TestNatsUser): string {
  const url = typeof nats === 'string' ? nats : nats.url;
  const password = servers.get(url)?.[user];
  if (password === undefined) throw new Error(`${url} is not a nats-server of startTestNats / useTestInfra: no credentials for ${user}`);
  return password;
}

/** nats.js connection options of the test-only user: `connect(testOnlyNatsOptions(infra.nats))`. */
export function testOnlyNatsOptions(nats: string | NatsHandle): { servers: string; user: string; pass: string } {
  const url = typeof nats === 'string' ? nats : nats.url;
  return { servers: url, user: TEST_ONLY_NATS_USER, pass: passwordOf(url, TEST_ONLY_NATS_USER) };
}

/** connectBus settings of the test-only user: `connectBus({ ...testOnlyBusSettings(infra.nats), name, logger })`. */
export function testOnlyBusSettings(nats: string | NatsHandle): { url: string; auth: { user: string; password: string } } {
  const url = typeof nats === 'string' ? nats : nats.url;
  return { url, auth: { user: TEST_ONLY_NATS_USER, password: passwordOf(url, TEST_ONLY_NATS_USER) } };
}

/**
 * connectBus settings of a hub service (its user, its inbox prefix), for tests that run a service's
 * code in-process: it meets the permissions the service has in production.
 */
export function serviceBusSettings(
  nats: string | NatsHandle,
  service: HubNatsUser,
): { url: string; auth: { user: string; password: string }; inboxPrefix: string } {
  const url = typeof nats === 'string' ? nats : nats.url;
  return { url, auth: { user: service, password: passwordOf(url, service) }, inboxPrefix: natsInboxPrefix(service) };
}

/** BROKKR__NATS__USER and BROKKR__NATS__PASSWORD of a user on a test server. */
export function natsUserEnv(nats: string | NatsHandle, user: TestNatsUser): Record<string, string> {
  return { BROKKR__NATS__USER: user, BROKKR__NATS__PASSWORD: passwordOf(nats, user) };
}

const CREDENTIAL_VARIABLES = [
  'BROKKR__NATS__USER',
  'BROKKR__NATS__PASSWORD',
  'BROKKR__NATS__TOKEN',
  'BROKKR__NATS__NKEY_SEED_FILE',
  'BROKKR__NATS__CREDS_FILE',
];

/**
 * The credentials spawnService gives a process whose BROKKR__NATS__URL is a test server and whose
 * environment names none: a hub service its own user, anything else (a fixture) the test-only one.
 */
export function credentialsForSpawn(env: Record<string, string>, service: string | undefined): Record<string, string> {
  const url = env.BROKKR__NATS__URL;
  if (url === undefined || !servers.has(url) || CREDENTIAL_VARIABLES.some((name) => name in env)) return {};
  const user = (HUB_NATS_USERS as readonly string[]).includes(service ?? '') ? (service as HubNatsUser) : TEST_ONLY_NATS_USER;
  return natsUserEnv(url, user);
}

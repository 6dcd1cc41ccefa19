import { randomBytes } from 'node:crypto';
import { DURABLES, STREAMS, SUBJECTS } from './subjects.ts';

/**
 * Who may publish and subscribe what on the hub's NATS: the one definition that the nats-server
 * configuration of `npm start`, the tests, compose and the hub chart is rendered from
 * (`natsAuthorizationConfig`; docs/nats-subjects.md §7 lists it in prose).
 *
 * Each hub service has a user of its own and may publish only what its code publishes: only the
 * api writes arbitrary audit entries, the dispatcher and maintenance only the actions they audit,
 * the audit-writer none. `integration` is read-only (`npm run nats:tail`, customers' consumers).
 * A client without credentials is refused: the configuration has no `no_auth_user`.
 */

/** The hub services, by the name of their NATS user (= their service folder). */
export const HUB_NATS_USERS = ['api', 'webhook-dispatcher', 'audit-writer', 'maintenance'] as const;
export type HubNatsUser = (typeof HUB_NATS_USERS)[number];
/** Every user the hub's nats-server knows. */
export const NATS_USERS = [...HUB_NATS_USERS, 'integration'] as const;
export type NatsUser = (typeof NATS_USERS)[number];

export interface SubjectRules {
  allow: string[];
  /** Wins over `allow`. */
  deny?: string[];
}

export interface NatsPermissions {
  publish: SubjectRules;
  subscribe: SubjectRules;
}

/**
 * A hub service's replies (JetStream API answers, publish acks, pulled messages) arrive under an
 * inbox prefix of its own, so no other user (integrations subscribe `_INBOX.>`) can read them.
 */
export function natsInboxPrefix(user: HubNatsUser): string {
  return `_INBOX_${user}`;
}

/** The audit actions a service other than the api records (the api records every other one). */
export const AUDITED_BY = {
  'webhook-dispatcher': ['webhook.delivery_failed'],
  maintenance: ['workorder.claim_released', 'stack.expired'],
} as const satisfies Partial<Record<HubNatsUser, readonly string[]>>;

const STREAM_NAMES = [STREAMS.events, STREAMS.audit];

/** Every hub service runs ensureStreams at start-up: account info, then each stream's info, create or update. */
const ENSURE_STREAMS = [
  '$JS.API.INFO',
  ...STREAM_NAMES.flatMap((s) => [`$JS.API.STREAM.INFO.${s}`, `$JS.API.STREAM.CREATE.${s}`, `$JS.API.STREAM.UPDATE.${s}`]),
];

/** A service's own durable pull consumer: ensureDurable (info, create, update), fetch/consume, acks. */
function ownDurable(stream: string, durable: string): string[] {
  const api = `$JS.API.CONSUMER`;
  return [
    `${api}.INFO.${stream}.${durable}`,
    `${api}.CREATE.${stream}.${durable}`,
    `${api}.CREATE.${stream}.${durable}.>`,
    `${api}.DURABLE.CREATE.${stream}.${durable}`,
    `${api}.MSG.NEXT.${stream}.${durable}`,
    `$JS.ACK.${stream}.${durable}.>`,
  ];
}

/** Reading a stream with consumers of one's own (create, info, delete, pull, ack) and fetching single messages. */
function readStream(stream: string): string[] {
  const api = `$JS.API.CONSUMER`;
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `${api}.CREATE.${stream}`,
    `${api}.CREATE.${stream}.>`,
    `${api}.DURABLE.CREATE.${stream}.*`,
    `${api}.INFO.${stream}.*`,
    `${api}.DELETE.${stream}.*`,
    `${api}.MSG.NEXT.${stream}.*`,
    `${api}.LIST.${stream}`,
    `${api}.NAMES.${stream}`,
    `$JS.ACK.${stream}.>`,
  ];
}

/** Every API call and ack on a hub durable, whatever the operation's name has in tokens. */
function hubDurable(stream: string, durable: string): string[] {
  return [
    `$JS.API.CONSUMER.*.${stream}.${durable}`,
    `$JS.API.CONSUMER.*.${stream}.${durable}.>`,
    `$JS.API.CONSUMER.*.*.${stream}.${durable}`,
    `$JS.ACK.${stream}.${durable}.>`,
  ];
}

/** Core hints every hub service may listen to (`brokkr.config.reload` is meant for all of them). */
const HUB_SUBSCRIBE = [SUBJECTS.configReload];

function hub(user: HubNatsUser, publish: string[], subscribe: string[]): NatsPermissions {
  return {
    publish: { allow: [...ENSURE_STREAMS, ...publish] },
    subscribe: { allow: [`${natsInboxPrefix(user)}.>`, ...HUB_SUBSCRIBE, ...subscribe] },
  };
}

const audited = (user: keyof typeof AUDITED_BY) => AUDITED_BY[user].map((action) => SUBJECTS.audit(action));

export const NATS_PERMISSIONS: Record<NatsUser, NatsPermissions> = {
  // The REST gateway: every write's events (outbox), every audit entry, and the hints it sends and
  // listens to across replicas (wake-ups, cache invalidation, live streams, the console's feeds).
  api: hub(
    'api',
    [
      SUBJECTS.eventsAll,
      SUBJECTS.auditAll,
      SUBJECTS.notifyAgentAll,
      SUBJECTS.notifyDeliveries,
      SUBJECTS.cacheInvalidateAll,
      SUBJECTS.configReload,
      SUBJECTS.liveStackAll,
      SUBJECTS.liveFleet,
      SUBJECTS.apiPresence,
    ],
    [
      SUBJECTS.notifyAgentAll,
      SUBJECTS.cacheInvalidate('pak'),
      SUBJECTS.cacheInvalidate('stack'),
      SUBJECTS.cacheInvalidate('trust'),
      SUBJECTS.eventsAll,
      SUBJECTS.auditAll,
      SUBJECTS.liveStackAll,
      SUBJECTS.liveFleet,
      SUBJECTS.apiPresence,
    ],
  ),
  // Consumes BROKKR_EVENTS through its durable; wakes its replicas; audits dead deliveries.
  'webhook-dispatcher': hub(
    'webhook-dispatcher',
    [...ownDurable(STREAMS.events, DURABLES.webhookDispatcher), SUBJECTS.notifyDeliveries, ...audited('webhook-dispatcher')],
    [SUBJECTS.notifyDeliveries, SUBJECTS.cacheInvalidate('webhooks')],
  ),
  // Consumes BROKKR_AUDIT through its durable; publishes nothing else.
  'audit-writer': hub('audit-writer', ownDurable(STREAMS.audit, DURABLES.auditWriter), []),
  // Relays the outbox and publishes what its tasks commit (expiries, rollouts), wakes agents and
  // dispatchers, and feeds the audit entries its tasks wrote.
  maintenance: hub('maintenance', [SUBJECTS.eventsAll, SUBJECTS.notifyAgentAll, SUBJECTS.notifyDeliveries, ...audited('maintenance')], []),
  // Read-only: the public contract (docs/nats-subjects.md) through consumers of its own, never the
  // hub's durables; replies on the default `_INBOX.` prefix, so any client library works unchanged.
  integration: {
    publish: {
      allow: ['$JS.API.INFO', '$JS.API.STREAM.NAMES', '$JS.API.STREAM.LIST', ...STREAM_NAMES.flatMap(readStream)],
      deny: [...hubDurable(STREAMS.events, DURABLES.webhookDispatcher), ...hubDurable(STREAMS.audit, DURABLES.auditWriter)],
    },
    subscribe: {
      allow: [
        '_INBOX.>',
        SUBJECTS.eventsAll,
        SUBJECTS.auditAll,
        'brokkr.notify.>',
        'brokkr.cache.invalidate.>',
        SUBJECTS.configReload,
        'brokkr.live.>',
      ],
    },
  },
};

/** The environment variable nats-server reads a user's password from (`$BROKKR_NATS_PASSWORD_API`). */
export function natsPasswordVariable(user: string): string {
  return `BROKKR_NATS_PASSWORD_${user.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * A random password nats-server reads as a string: 48 hex digits after a letter (a value that
 * looks like a number, `123` or `7GB`, would be read as one and refused).
 */
export function newNatsPassword(): string {
  return `p${randomBytes(24).toString('hex')}`;
}

/** A new password for every user of the hub's nats-server. */
export function newNatsPasswords(): Record<NatsUser, string> {
  return Object.fromEntries(NATS_USERS.map((user) => [user, newNatsPassword()])) as Record<NatsUser, string>;
}

/** `{ BROKKR_NATS_PASSWORD_API: <password>, ... }`: what nats-server's environment must hold. */
export function natsPasswordEnv(passwords: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(passwords).map(([user, password]) => [natsPasswordVariable(user), password]));
}

/** A user beyond the hub's own, e.g. a test's (`natsAuthorizationConfig({ extraUsers })`). */
export interface ExtraNatsUser {
  user: string;
  permissions: NatsPermissions;
}

const quoted = (subjects: readonly string[]) => subjects.map((s) => JSON.stringify(s));

function rulesBlock(kind: 'publish' | 'subscribe', rules: SubjectRules): string[] {
  const list = (name: string, subjects: readonly string[]) => [
    `        ${name}: [`,
    ...quoted(subjects).map((s) => `          ${s}`),
    '        ]',
  ];
  return [`      ${kind}: {`, ...list('allow', rules.allow), ...(rules.deny?.length ? list('deny', rules.deny) : []), '      }'];
}

function userBlock(user: string, permissions: NatsPermissions): string[] {
  return [
    '  {',
    `    user: ${JSON.stringify(user)}`,
    `    password: $${natsPasswordVariable(user)}`,
    '    permissions: {',
    ...rulesBlock('publish', permissions.publish),
    ...rulesBlock('subscribe', permissions.subscribe),
    '    }',
    '  }',
  ];
}

/**
 * The `authorization` block of nats-server's configuration: one user per hub service plus
 * `integration`, with the permissions above. Passwords are not in it: each is a reference to an
 * environment variable of nats-server (`natsPasswordVariable`), so the same text serves `npm start`,
 * the tests, compose and the chart, and is no secret. A variable that is not set stops nats-server
 * at start-up. Passwords must start with a letter (nats-server reads `123` or `7GB` as numbers).
 */
export function natsAuthorizationConfig(options: { extraUsers?: readonly ExtraNatsUser[] } = {}): string {
  const users = [
    ...NATS_USERS.map((user) => userBlock(user, NATS_PERMISSIONS[user])),
    ...(options.extraUsers ?? []).map((u) => userBlock(u.user, u.permissions)),
  ];
  return ['authorization {', '  users = [', ...users.flat().map((line) => `  ${line}`), '  ]', '}', ''].join('\n');
}

/**
 * What `npm start` gives its nats-server (@brokkr/infra's startNats options): the hub's
 * authorization and, in the environment, the passwords it refers to.
 */
export function hubNatsServer(passwords: Readonly<Record<NatsUser, string>>): { config: string; env: Record<string, string> } {
  return { config: natsAuthorizationConfig(), env: natsPasswordEnv(passwords) };
}

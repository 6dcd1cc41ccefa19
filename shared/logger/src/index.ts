import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { DestinationStream, Logger } from 'pino';

export interface LoggerSettings {
  service: string;
  level?: string;
  /** `json` (default, for machines) or `text` (readable in a terminal). */
  format?: 'json' | 'text';
  /** Extra redaction paths on top of the defaults. */
  redact?: string[];
}

/**
 * Everything that can carry a credential. Paths are pino redaction paths; `*` covers one level so
 * the same key is hidden wherever a request, config or payload object puts it.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'Authorization',
  '*.Authorization',
  '*.*.Authorization',
  '*.*.authorization',
  '*.*.pak',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'pak',
  '*.pak',
  'initial_pak',
  '*.initial_pak',
  'auth_header',
  '*.auth_header',
  'secret',
  '*.secret',
  'signing_secret',
  '*.signing_secret',
  'url_encrypted',
  'BROKKR__AGENT__PAK',
  'BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY',
  '*.BROKKR__AGENT__PAK',
  '*.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY',
];

/** PAK-shaped strings are masked even inside free text such as error messages. */
const PAK_PATTERN = /brokkr_BR[1-9A-HJ-NP-Za-km-z]{6}_[1-9A-HJ-NP-Za-km-z]+/g;
export function maskSecrets(text: string): string {
  return text.replace(PAK_PATTERN, 'brokkr_BR******_[REDACTED]');
}

/** Errors keep their stack, but a PAK quoted in a message or stack never reaches the log. */
function serializeError(err: unknown): unknown {
  const plain = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  for (const key of ['message', 'stack'] as const) {
    const value = plain[key];
    if (typeof value === 'string') plain[key] = maskSecrets(value);
  }
  return plain;
}

/**
 * One root logger per service; children add scope (`logger.child({ deliveryId })`).
 * `destination` receives JSON lines instead of stdout (tests, files); `format` is then ignored.
 */
export function createLogger(settings: LoggerSettings, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: settings.service },
    redact: { paths: [...REDACTED_PATHS, ...(settings.redact ?? [])], censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: serializeError },
    hooks: {
      logMethod(args, method) {
        const masked = args.map((a) => (typeof a === 'string' ? maskSecrets(a) : a)) as Parameters<typeof method>;
        method.apply(this, masked);
      },
    },
  };
  if (destination) return pino(options, destination);
  if (settings.format === 'text') {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true },
      },
    });
  }
  return pino(options);
}

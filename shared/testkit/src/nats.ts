import { startNats, type NatsHandle } from '@brokkr/infra';

/**
 * Every test file gets its own nats-server (about 100 ms to start): streams and durable consumers
 * are then isolated without prefixing any subject, so tests exercise the real names.
 */
export function startTestNats(options: { port?: number; storeDir?: string } = {}): Promise<NatsHandle> {
  return startNats(options);
}

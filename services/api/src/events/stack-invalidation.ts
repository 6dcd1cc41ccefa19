import { z } from 'zod';
import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';

/**
 * "Who may watch this stack changed": its owner changed, it was deleted, or (`all`) its generator
 * was deleted and took an unknown set of stacks with it. Every api replica hears it on the core
 * subject `brokkr.cache.invalidate.stack` (docs/nats-subjects.md) and re-checks what it holds for
 * the stack (live sockets, the console's owner cache). A deleted stack is also announced by its
 * `stack.deleted` event, whoever deleted it (DELETE /stacks/{id}, expiry in maintenance), so
 * listeners hear both subjects.
 */
export type StackInvalidation = { stack_id: string } | { all: true };

const INVALIDATION_SUBJECT = SUBJECTS.cacheInvalidate('stack');
const DELETED_EVENT_SUBJECT = SUBJECTS.event('stack.deleted');

const invalidationSchema = z.union([z.object({ stack_id: z.string() }), z.object({ all: z.literal(true) })]);
const deletedEventSchema = z.object({ data: z.object({ stack_id: z.string() }) });

/** Tells every replica (this one included, through NATS). A lost hint leaves a socket open until its PAK changes. */
export function publishStackInvalidation(nc: NatsConnection, notice: StackInvalidation, logger: Logger): void {
  try {
    publishCore(nc, INVALIDATION_SUBJECT, notice);
  } catch (err) {
    logger.warn({ err }, 'stack invalidation not published');
  }
}

/** The stack whose watchers must be re-checked, or undefined for every stack; false for a malformed message. */
function invalidatedStack(subject: string, payload: unknown): string | undefined | false {
  if (subject === DELETED_EVENT_SUBJECT) {
    const event = deletedEventSchema.safeParse(payload);
    return event.success ? event.data.data.stack_id : false;
  }
  const notice = invalidationSchema.safeParse(payload);
  if (!notice.success) return false;
  return 'stack_id' in notice.data ? notice.data.stack_id : undefined;
}

/** Calls `listener` for every invalidation and every `stack.deleted` event; returns the unsubscribe. */
export function onStackInvalidation(nc: NatsConnection, logger: Logger, listener: (stackId: string | undefined) => void): () => void {
  const subs = [INVALIDATION_SUBJECT, DELETED_EVENT_SUBJECT].map((subject) =>
    nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return logger.warn({ err }, 'stack invalidation subscription error');
        let payload: unknown;
        try {
          payload = msg.json();
        } catch {
          return logger.warn({ subject }, 'ignoring a malformed stack invalidation');
        }
        const stackId = invalidatedStack(subject, payload);
        if (stackId !== false) listener(stackId);
      },
    }),
  );
  return () => subs.forEach((sub) => sub.unsubscribe());
}

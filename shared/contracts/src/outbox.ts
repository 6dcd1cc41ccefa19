import { z } from 'zod';
import { eventEnvelopeSchema } from './events.ts';

/**
 * A row of `outbox`: an event committed with the write that caused it, published after the commit
 * by the api and, if that did not happen, by maintenance's relay. The id is the event id and the
 * `Nats-Msg-Id`, so a double publish is dropped by the stream.
 */
export const outboxRowSchema = z.object({
  id: z.guid(),
  event_type: z.string(),
  subject: z.string(),
  payload: eventEnvelopeSchema,
  headers: z.object({ traceparent: z.string().optional() }).nullable(),
});
export type OutboxRow = z.output<typeof outboxRowSchema>;

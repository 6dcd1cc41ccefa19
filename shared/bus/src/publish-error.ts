import { DependencyError } from '@brokkr/errors';

/**
 * Why a JetStream publish was not acknowledged:
 * - `no-stream`: no stream takes the subject (the server answered "no responders"), failed at once;
 * - `rejected`: the stream refused the message (limits, expectations) or the client could not send it;
 * - `timeout`: no ack in time (server slow or gone; the message may still have been stored);
 * - `closed`: the connection closed before the ack arrived;
 * - `invalid-ack`: the answer was not a PubAck.
 * In every case the message may be published again with the same msgID: a stored copy absorbs it.
 */
export type PublishFailure = 'no-stream' | 'rejected' | 'timeout' | 'closed' | 'invalid-ack';

export class PublishAckError extends DependencyError {
  /** JetStream's status code (e.g. 503), when the server sent one. */
  readonly code: number | undefined;
  /** JetStream's `err_code` (e.g. 10077 for a full stream), when the stream refused the message. */
  readonly errCode: number | undefined;

  constructor(
    readonly reason: PublishFailure,
    readonly subject: string,
    message: string,
    options: ErrorOptions & { code?: number; errCode?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.errCode = options.errCode;
  }
}

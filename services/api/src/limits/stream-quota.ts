import type { Identity } from '../auth/identity.ts';
import { errorKind, type ApiError } from '../errors/api-error.ts';

/** What a PAK holds open: WebSockets, console event streams (SSE), long-polls held on a wait. */
export type StreamKind = 'websocket' | 'event_stream' | 'long_poll';

export const tooManyStreams = errorKind(429, 'too_many_streams', 'Too many open streams for this PAK');

/** Every PAK belongs to exactly one identity (the admin, one agent, one generator): counting per identity is counting per PAK. */
function holderOf(identity: Identity): string {
  if (identity.admin) return 'admin';
  return identity.agent !== null ? `agent:${identity.agent}` : `generator:${identity.generator ?? ''}`;
}

/**
 * Open streams per PAK and kind on this replica, so one tenant cannot pin the replica's sockets,
 * memory and wake-up watches (docs/security.md, "Denial of service by an authenticated tenant").
 * The count is per replica: with R replicas behind a balancer a PAK holds at most R × the limit.
 */
export class StreamQuota {
  private readonly open = new Map<string, number>();

  constructor(private readonly limits: Readonly<Record<StreamKind, number>>) {}

  /** A lease, or undefined when the PAK already holds its limit. The lease's release may be called more than once. */
  take(kind: StreamKind, identity: Identity): (() => void) | undefined {
    const key = `${kind} ${holderOf(identity)}`;
    const held = this.open.get(key) ?? 0;
    if (held >= this.limits[kind]) return undefined;
    this.open.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.open.get(key) ?? 1) - 1;
      if (now > 0) this.open.set(key, now);
      else this.open.delete(key);
    };
  }

  /** `take`, or 429 `too_many_streams` (routes list `tooManyStreams` in their errors). */
  require(kind: StreamKind, identity: Identity): () => void {
    const release = this.take(kind, identity);
    if (!release) throw this.refusal(kind);
    return release;
  }

  /** The 429 for a PAK at its limit of `kind`. */
  refusal(kind: StreamKind): ApiError {
    return tooManyStreams.with(`This PAK already holds ${this.limits[kind]} open ${kind.replace('_', ' ')}s on this replica`, {
      kind,
      limit: this.limits[kind],
    });
  }
}

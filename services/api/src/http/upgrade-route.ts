import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import type { ApiSettings } from '../settings/api-settings.ts';

/**
 * The message limit of server→client sockets (`/stacks/{id}/live`, `/fleet/live`): their clients
 * send nothing but control frames, so a few KiB is plenty (Brokkr accepts 64 MiB on every socket).
 */
export const LISTENER_MAX_MESSAGE_BYTES = 4 * 1024;

/**
 * One WebSocket endpoint on the api's HTTP server. Endpoints are listed in `upgrade-routes.ts`
 * (like `resources/index.ts`); the router authenticates, then calls `handle`.
 */
export interface UpgradeRoute {
  /** Full path with express-style params ('/api/v1/stacks/:id/live'); matched exactly, query ignored. */
  path: string;
  /** Also accept `Sec-WebSocket-Protocol: brokkr.pak.<PAK>` when there is no Authorization header (browser consumers). */
  subprotocolAuth: boolean;
  /** The `endpoint` label of the HTTP metrics; defaults to `path`. */
  endpoint?: string;
  /**
   * The largest message the client may send; a larger one closes the socket with 1009 (Message
   * Too Big). Sized for what the client legitimately sends: a few KiB on listen-only sockets.
   */
  maxMessageBytes(settings: ApiSettings): number;
  /** Decides access, then `accept()` or `reject()`. */
  handle(up: UpgradeRequest): Promise<void> | void;
}

export interface UpgradeRequest {
  ctx: ApiContext;
  req: IncomingMessage;
  /** Raw path parameters: validate them yourself. */
  params: Record<string, string>;
  identity: Identity;
  pakHash: string;
  /**
   * Completes the handshake (101; echoes `brokkr.v1` only if the client offered it). The socket is
   * closed when its PAK stops resolving (rotation or deletion on any replica).
   */
  accept(): Promise<WebSocket>;
  /** A plain HTTP answer instead of the upgrade; empty body unless given. */
  reject(status: number, body?: string): void;
}

import type { WebSocket } from 'ws';

/** How long a peer gets to answer our Close before the TCP connection is cut. */
const CLOSE_GRACE_MS = 500;

/** Sends a Close frame with no payload (as Brokkr does) and cuts the connection if the peer does not answer. */
export function closeSocket(ws: WebSocket): void {
  if (ws.readyState === ws.CLOSED) return;
  if (ws.readyState === ws.OPEN) ws.close();
  setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
}

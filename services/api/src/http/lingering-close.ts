import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// How long the client may keep sending after its answer before the connection is cut.
const LINGER_MS = 2_000;

/**
 * Marks the response as the connection's last (`Connection: close`) for a request whose body is
 * left unread, and closes the connection gracefully once the response is written: a FIN after
 * the answer, what the client still sends is read and dropped, and only after `LINGER_MS` is the
 * connection cut. Node's own close would destroy the socket right away; with unread input that is
 * a TCP reset, and a client still uploading often loses the answer it was sent (the 413 it
 * needed to stop). Node closes a `Connection: close` response's socket through `destroySoon()`,
 * which is replaced on this socket only.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  const socket: Socket & { destroySoon?: () => void } = res.req.socket;
  socket.destroySoon = () => {
    socket.end();
    const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(cut));
  };
}

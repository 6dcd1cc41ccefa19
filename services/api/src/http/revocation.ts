import type { WebSocket } from 'ws';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Logger } from '@brokkr/logger';
import { closeSocket } from '../sockets/close-socket.ts';

/**
 * Open sockets by the PAK hash they authenticated with. When a hash is invalidated (a rotation
 * or deletion on any replica: the authenticator's NATS invalidation), its sockets are closed
 * unless the hash still resolves; Brokkr closes only agent sockets, and only on the replica
 * that took the request.
 */
export class RevocationIndex {
  private readonly byHash = new Map<string, Set<WebSocket>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly auth: Authenticator,
    private readonly logger: Logger,
  ) {
    this.unsubscribe = auth.onInvalidate((hash) => void this.recheck(hash));
  }

  add(hash: string, ws: WebSocket): void {
    let set = this.byHash.get(hash);
    if (!set) this.byHash.set(hash, (set = new Set()));
    set.add(ws);
    ws.once('close', () => {
      set.delete(ws);
      if (set.size === 0 && this.byHash.get(hash) === set) this.byHash.delete(hash);
    });
  }

  private async recheck(hash: string | undefined): Promise<void> {
    const hashes = hash === undefined ? [...this.byHash.keys()] : this.byHash.has(hash) ? [hash] : [];
    for (const h of hashes) {
      try {
        if (await this.auth.resolve(h)) continue;
      } catch (err) {
        // The database is unreachable: keep the socket, the next invalidation or reconnect decides.
        this.logger.warn({ err }, 'could not re-check a WebSocket credential');
        continue;
      }
      const sockets = [...(this.byHash.get(h) ?? [])];
      if (sockets.length) this.logger.info({ sockets: sockets.length }, 'closing WebSockets whose PAK was revoked');
      for (const ws of sockets) closeSocket(ws);
    }
  }

  close(): void {
    this.unsubscribe();
  }
}

import type { WebSocket } from 'ws';

/** Above this many unsent bytes a consumer counts as lagging: frames are skipped, not queued without bound. */
export const MAX_BUFFERED_BYTES = 1 << 20;

/**
 * One server→client subscriber socket (`/stacks/{id}/live`, `/fleet/live`). Sends never block the
 * feed: while the client has not read what was already sent, new frames are counted and skipped,
 * and `lagMarker` (if given) says so once the client has caught up (Brokkr's per-stack `log_gap`
 * with reason `buffer_full`; the fleet feed has none, a consumer re-reads GET /fleet).
 */
export class ConsumerSocket {
  private skipped = 0;
  private skippedSince: string | undefined;

  constructor(
    readonly ws: WebSocket,
    private readonly lagMarker?: (skipped: number, since: string) => string,
  ) {
    // Anything the client sends is ignored (Brokkr's consumer endpoints are server→client only).
    ws.on('message', () => undefined);
    ws.on('error', () => undefined);
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  send(text: string): void {
    if (!this.open) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.skipped += 1;
      this.skippedSince ??= new Date().toISOString();
      return;
    }
    if (this.skipped > 0) {
      if (this.lagMarker) this.ws.send(this.lagMarker(this.skipped, this.skippedSince ?? new Date().toISOString()));
      this.skipped = 0;
      this.skippedSince = undefined;
    }
    this.ws.send(text);
  }

  onClose(listener: () => void): void {
    this.ws.once('close', listener);
  }
}

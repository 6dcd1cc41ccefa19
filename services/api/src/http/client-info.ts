import type { IncomingMessage } from 'node:http';

/** The first X-Forwarded-For entry (Brokkr's rule), else the socket's address. */
export function clientIp(req: IncomingMessage): string | null {
  const forwarded = req.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  if (first) return first;
  return req.socket.remoteAddress ?? null;
}

export function userAgent(req: IncomingMessage): string | null {
  return req.headers['user-agent'] ?? null;
}

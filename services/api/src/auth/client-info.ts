import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** The address a request came from, as recorded in audit entries. */
export type ClientAddress = (req: IncomingMessage) => string | null;

export interface ProxyTrust {
  /** Every hop is trusted: X-Forwarded-For's first entry wins (Brokkr's rule). */
  trustEveryHop: boolean;
  /** Addresses and CIDRs (`10.0.0.0/8`) of the proxies whose X-Forwarded-For is believed. */
  trustedProxies: readonly string[];
}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is `10.0.0.1`. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Whether a hop is one of our proxies; exported for express's `trust proxy`, so both agree. */
export function proxyTrust(trust: ProxyTrust): (address: string) => boolean {
  if (trust.trustEveryHop) return () => true;
  const list = new BlockList();
  for (const entry of trust.trustedProxies) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy; then X-Forwarded-For
 * is read from its right end (the entry our proxy appended) leftwards, and the first hop that is not
 * a trusted proxy is the client. Entries left of it were written by the client and prove nothing.
 */
export function clientAddress(trust: ProxyTrust): ClientAddress {
  const trusted = proxyTrust(trust);
  return (req) => {
    const peer = req.socket.remoteAddress;
    if (peer === undefined) return null;
    let hop = plain(peer);
    const forwarded = req.headersDistinct['x-forwarded-for']?.join(',').split(',') ?? [];
    for (let i = forwarded.length - 1; i >= 0 && trusted(hop); i--) {
      const next = plain(forwarded[i]!.trim());
      if (next === '') break;
      hop = next;
    }
    return hop;
  };
}

export function userAgent(req: IncomingMessage): string | null {
  return req.headers['user-agent'] ?? null;
}

import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BrokkrError } from '@brokkr/errors';

/**
 * SSRF guard for webhook targets. An admin-supplied URL must not let the hub reach its own
 * network: loopback, link-local (cloud metadata at 169.254.169.254 / fd00:ec2::254), RFC 1918,
 * CGNAT, unique-local, multicast, reserved and unspecified addresses are refused. The check runs
 * on the address actually connected to (inside the socket's DNS lookup), so a hostname that
 * resolves to a private address — or re-resolves to one later (DNS rebinding) — is caught too.
 */
export class EgressBlockedError extends BrokkrError {
  readonly code = 'EBROKKR_EGRESS_BLOCKED';
  constructor(readonly address: string, readonly host: string) {
    super(`webhook target ${host} resolves to ${address}, a private or reserved address (set BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`);
  }
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", incl. the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique-local (incl. fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['100::', 64], // discard-only
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** `::ffff:a.b.c.d` and NAT64 `64:ff9b::a.b.c.d` reach an IPv4 host: judge that host. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(bare);
  if (v4 !== undefined) return blocked.check(v4, 'ipv4');
  return blocked.check(bare, 'ipv6');
}

/**
 * Throws when `hostname` is an IP literal in a forbidden range. Sockets skip the DNS lookup for
 * literals, so `guardedLookup` alone would never see them.
 */
export function assertLiteralHostAllowed(hostname: string): void {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0 && isForbiddenAddress(bare)) throw new EgressBlockedError(bare, hostname);
}

/**
 * A `lookup` for net/tls/http/undici connect options that resolves as usual and drops forbidden
 * addresses; if none is left, the connection fails with EgressBlockedError.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) {
      callback(err, '', 0);
      return;
    }
    const allowed = addresses.filter((a) => !isForbiddenAddress(a.address));
    const first = allowed[0];
    if (first === undefined) {
      callback(new EgressBlockedError(addresses[0]?.address ?? 'nothing', hostname) as unknown as NodeJS.ErrnoException, '', 0);
      return;
    }
    if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    else callback(null, first.address, first.family);
  });
};

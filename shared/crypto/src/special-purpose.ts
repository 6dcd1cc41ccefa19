import { BlockList, isIP } from 'node:net';

/**
 * The address ranges a webhook may never reach: every entry of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and its successors), whether or not the registry
 * calls it "globally reachable" (nobody runs a webhook receiver on an AS112 or AMT anycast
 * address, and documentation ranges such as TEST-NET-1 do get assigned to real interfaces in
 * labs and containers), plus multicast, broadcast and everything IPv6 outside global unicast.
 */

const IPV4_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", incl. the unspecified address (0.0.0.0 reaches localhost on Linux)
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space, CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (DS-Lite, NAT64 discovery, PCP/TURN anycast …)
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // direct delegation AS112
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. the limited broadcast 255.255.255.255
];

const IPV6_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // ::/128 unspecified, ::1/128 loopback, deprecated IPv4-compatible ::a.b.c.d
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 63], // discard-only 100::/64 and the dummy prefix 100:0:0:1::/64
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID(v2), AMT, …
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 SIDs
  ['fc00::', 7], // unique-local (incl. fd00:ec2::254, the EC2 metadata service)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];

const v4 = new BlockList();
for (const [net, prefix] of IPV4_RANGES) v4.addSubnet(net, prefix, 'ipv4');
const v6 = new BlockList();
for (const [net, prefix] of IPV6_RANGES) v6.addSubnet(net, prefix, 'ipv6');

/** The 16 bytes of a valid IPv6 literal (zone already removed), dotted IPv4 tail included. */
export function ipv6Bytes(address: string): Uint8Array {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 255;
  });
  return bytes;
}

const dottedQuad = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const isZero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/**
 * The IPv4 host an IPv6 address actually reaches, for the forms that embed one: IPv4-mapped
 * `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:AABB:CCDD::/48`.
 */
export function embeddedIpv4(bytes: Uint8Array): string | undefined {
  if (isZero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return dottedQuad(bytes, 12);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && isZero(bytes, 4, 12))
    return dottedQuad(bytes, 12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return dottedQuad(bytes, 2);
  return undefined;
}

export type Judged = { family: 4; address: string; special: boolean } | { family: 6; address: string; special: boolean };

/**
 * Classifies a bare IP literal: the IPv4 address it reaches (embedded forms unwrapped) or the
 * IPv6 address, and whether it lies in a special-purpose range. Undefined for non-IP input.
 */
export function judgeAddress(bare: string): Judged | undefined {
  const family = isIP(bare);
  if (family === 4) return { family: 4, address: bare, special: v4.check(bare, 'ipv4') };
  if (family !== 6) return undefined;
  const bytes = ipv6Bytes(bare);
  const inner = embeddedIpv4(bytes);
  if (inner !== undefined) return { family: 4, address: inner, special: v4.check(inner, 'ipv4') };
  // Only global unicast (2000::/3) is routable on the internet; the rest is reserved or local.
  const globalUnicast = ((bytes[0] ?? 0) & 0xe0) === 0x20;
  return { family: 6, address: bare, special: !globalUnicast || v6.check(bare, 'ipv6') };
}

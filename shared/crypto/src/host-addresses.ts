import { BlockList } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * The addresses of this machine's own interfaces. A webhook aimed at one of them reaches the
 * hub's own ports (api, health, metrics) whatever range the address is in: the outside probe
 * found the host on a TEST-NET address and read the api through it. Interfaces change (DHCP,
 * containers joining networks), so the list is re-read when it is older than REFRESH_MS;
 * reading it costs about 0.1 ms, too much for every check but nothing once a second.
 */

const REFRESH_MS = 1000;

type InterfaceReader = () => ReturnType<typeof networkInterfaces>;

let readInterfaces: InterfaceReader = networkInterfaces;
let cached: { list: BlockList; at: number } | undefined;

function build(): BlockList {
  const list = new BlockList();
  for (const entries of Object.values(readInterfaces())) {
    for (const entry of entries ?? []) {
      // Link-local IPv6 entries are per-interface (scope id); the range is refused anyway.
      list.addAddress(entry.address.replace(/%.*$/, ''), entry.family === 'IPv4' ? 'ipv4' : 'ipv6');
    }
  }
  return list;
}

function current(now: number): BlockList {
  if (!cached || now - cached.at >= REFRESH_MS) cached = { list: build(), at: now };
  return cached.list;
}

/** True when `address` (bare, IPv4 or IPv6, embedded forms already unwrapped) is one of this host's. */
export function isHostAddress(address: string, family: 4 | 6, now: number = Date.now()): boolean {
  return current(now).check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Tests: read interfaces from `reader` instead of the machine (none = the machine again). */
export function useInterfaceReader(reader: InterfaceReader = networkInterfaces): void {
  readInterfaces = reader;
  cached = undefined;
}

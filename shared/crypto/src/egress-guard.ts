import { isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BrokkrError } from '@brokkr/errors';
import { isHostAddress } from './host-addresses.ts';
import { judgeAddress } from './special-purpose.ts';

/**
 * SSRF guard for webhook targets. An admin-supplied URL must not let the hub reach its own
 * machine or network: the host's own interface addresses, loopback, link-local (cloud metadata
 * at 169.254.169.254 / fd00:ec2::254), RFC 1918, CGNAT, unique-local, documentation, benchmarking,
 * multicast, reserved and unspecified addresses — every IANA special-purpose range — are
 * refused. The check runs on the address actually connected to (inside the socket's DNS
 * lookup), so a hostname that resolves to a private address — or re-resolves to one later (DNS
 * rebinding) — is caught too. BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS=true turns the
 * whole guard off, the host's own addresses included (docs/compatibility.md says why).
 */
export class EgressBlockedError extends BrokkrError {
  readonly code = 'EBROKKR_EGRESS_BLOCKED';
  constructor(
    readonly address: string,
    readonly host: string,
  ) {
    super(
      `webhook target ${host} resolves to ${address}, a private or reserved address or one of the hub's own (set BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`,
    );
  }
}

/**
 * True for an address a webhook must not reach: a special-purpose range (special-purpose.ts)
 * or one of this host's own interface addresses (host-addresses.ts). IPv6 forms that embed an
 * IPv4 address are judged by that address. Anything that is not an IP literal is refused.
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const judged = judgeAddress(bare);
  if (!judged) return true;
  return judged.special || isHostAddress(judged.address, judged.family);
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
 * A `lookup` for net/tls/http/undici connect options that resolves as usual and keeps only the
 * addresses `keep` accepts; if none is left, the connection fails with `refusal`'s error. The
 * address checked is the address connected to, so a name that re-resolves elsewhere later (DNS
 * rebinding) gains nothing. The chart and overlay fetcher (@brokkr/sources) builds its own rule
 * on it: the same forbidden ranges, plus the exceptions its settings allow.
 */
export function lookupKeeping(keep: (address: string) => boolean, refusal: (address: string, hostname: string) => Error): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const allowed = addresses.filter((a) => keep(a.address));
      const first = allowed[0];
      if (first === undefined) {
        callback(refusal(addresses[0]?.address ?? 'nothing', hostname) as unknown as NodeJS.ErrnoException, '', 0);
        return;
      }
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}

/** The webhooks' lookup: drops forbidden addresses; if none is left, EgressBlockedError. */
export const guardedLookup: LookupFunction = lookupKeeping(
  (address) => !isForbiddenAddress(address),
  (address, hostname) => new EgressBlockedError(address, hostname),
);

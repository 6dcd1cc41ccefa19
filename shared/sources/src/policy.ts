import { BlockList, isIP } from 'node:net';
import { SourceError } from './errors.ts';

/** What the hub may reach when it fetches a source, and how much it takes. */
export interface SourcePolicy {
  /** Private, loopback, link-local and other reserved addresses are refused unless this is true. */
  allowPrivateNetworks: boolean;
  /** Host names (or `*.example.com`) the hub may fetch from; empty: any public host. */
  allowedHosts: string[];
  /** The most bytes one chart, archive or repository index may have. */
  maxBytes: number;
  /** The whole fetch (index, token, manifest, download, redirects) must finish within this. */
  timeoutMs: number;
  /**
   * Addresses or CIDRs reachable even when private networks are not (an in-house chart
   * repository at 10.1.2.3), so opening one host does not open the whole network.
   */
  allowedPrivateCidrs?: string[];
}

/** The settings sourcePolicyFromConfig reads (shared/config's api schema). */
export interface SourceConfig {
  BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean;
  BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS?: boolean | undefined;
  BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS: string;
  BROKKR__BROKER__SOURCE_ALLOWED_HOSTS: string;
  BROKKR__BROKER__SOURCE_MAX_BYTES: number;
  BROKKR__BROKER__SOURCE_TIMEOUT_SECONDS: number;
}

const commaList = (value: string): string[] =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

/**
 * The api's policy. SOURCE_ALLOW_PRIVATE_NETWORKS unset follows WEBHOOK_ALLOW_PRIVATE_NETWORKS:
 * one switch opens the hub's outbound requests to its own networks (development, tests), and
 * an operator who wants receivers there but not sources (or the other way round) sets both.
 */
export function sourcePolicyFromConfig(config: SourceConfig): SourcePolicy {
  return {
    allowPrivateNetworks: config.BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS ?? config.BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    allowedHosts: commaList(config.BROKKR__BROKER__SOURCE_ALLOWED_HOSTS),
    allowedPrivateCidrs: commaList(config.BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS),
    maxBytes: config.BROKKR__BROKER__SOURCE_MAX_BYTES,
    timeoutMs: config.BROKKR__BROKER__SOURCE_TIMEOUT_SECONDS * 1000,
  };
}

/** `*.example.com` matches its subdomains (not example.com itself); anything else matches exactly. */
export function hostAllowed(hostname: string, allowedHosts: readonly string[]): boolean {
  if (allowedHosts.length === 0) return true;
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return allowedHosts.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1 : host === pattern;
  });
}

export function assertHostAllowed(url: URL, policy: SourcePolicy): void {
  if (!hostAllowed(url.hostname, policy.allowedHosts)) {
    throw new SourceError('source_host_not_allowed', `${url.hostname} is not on the hub's list of hosts sources may come from`, {
      host: url.hostname,
    });
  }
}

/** The policy's private exceptions as a matcher (Node's BlockList also matches IPv4-mapped IPv6). */
export function privateExceptions(cidrs: readonly string[] = []): (address: string) => boolean {
  if (cidrs.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of cidrs) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
    const family = isIP(bare);
    return family !== 0 && list.check(bare, family === 6 ? 'ipv6' : 'ipv4');
  };
}

import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { isForbiddenAddress, lookupKeeping } from '@brokkr/crypto';
import { SourceError } from '../errors.ts';
import { privateExceptions, type SourcePolicy } from '../policy.ts';

function refused(address: string, hostname: string, plain: boolean): SourceError {
  const message = plain
    ? `${hostname}: plain http reaches only private addresses the hub allows (BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS, BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS); use https`
    : `${hostname} is, or resolves to, a private or reserved address (BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS or BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS allow it)`;
  // The address a name resolved to stays out of the details: a tenant must not map the hub's
  // internal DNS through error messages.
  return new SourceError('source_address_not_allowed', message, { host: hostname, ...(address === hostname ? { address } : {}) });
}

/**
 * The connector every source request goes through: the webhooks' SSRF rule (@brokkr/crypto's
 * isForbiddenAddress: private, loopback, link-local, metadata, every special-purpose range and
 * the hub's own addresses) judged on the address actually connected to, IP literals before
 * connecting and names inside the socket's DNS lookup. Redirects, token realms and blob
 * downloads pass through it like the first request.
 *
 * HTTPS reaches public addresses, and private ones only where the policy allows them. Plain HTTP
 * is the other way round: it reaches only private addresses the policy allows (a registry on
 * the hub's network, the tests' servers on 127.0.0.1), never a public host, whose content could
 * be changed on the way.
 */
export function sourceConnector(policy: SourcePolicy): buildConnector.connector {
  const exempt = privateExceptions(policy.allowedPrivateCidrs);
  const privateAllowed = (address: string) => policy.allowPrivateNetworks || exempt(address);
  const overTls = (address: string) => !isForbiddenAddress(address) || privateAllowed(address);
  const overPlain = (address: string) => isForbiddenAddress(address) && privateAllowed(address);
  const tls = buildConnector({ lookup: lookupKeeping(overTls, (address, host) => refused(address, host, false)) });
  const plain = buildConnector({ lookup: lookupKeeping(overPlain, (address, host) => refused(address, host, true)) });
  return (opts, callback) => {
    const isPlain = opts.protocol === 'http:';
    const literal = opts.hostname.replace(/^\[|\]$/g, '');
    // Sockets skip the lookup for IP literals, so those are judged here.
    if (isIP(literal) !== 0 && !(isPlain ? overPlain : overTls)(literal)) {
      callback(refused(literal, literal, isPlain), null);
      return;
    }
    (isPlain ? plain : tls)(opts, callback);
  };
}

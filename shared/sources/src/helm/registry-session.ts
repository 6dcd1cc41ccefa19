import { isIP } from 'node:net';
import { isForbiddenAddress } from '@brokkr/crypto';
import { SourceError } from '../errors.ts';
import { statusError, type SourceHttp, type SourceResponse } from '../http/client.ts';
import { privateExceptions, type SourcePolicy } from '../policy.ts';

const TOKEN_MAX_BYTES = 64 * 1024;
const TOKEN = /^[\x21-\x7e]{1,8192}$/;

/**
 * `oci://` says nothing about TLS; Helm has a --plain-http flag for it. The hub speaks plain
 * HTTP only to a registry it could reach on a private network anyway: `localhost` or a private
 * IP literal, and only when the policy allows private addresses (all of them, or that one).
 * Everything else is HTTPS. The connector enforces the same rule on every request.
 */
export function registryScheme(hostname: string, policy: SourcePolicy): 'http:' | 'https:' {
  const host = hostname.replace(/^\[|\]$/g, '');
  const isPrivate = host === 'localhost' || (isIP(host) !== 0 && isForbiddenAddress(host));
  const allowed = policy.allowPrivateNetworks || (isIP(host) !== 0 && privateExceptions(policy.allowedPrivateCidrs)(host));
  return isPrivate && allowed ? 'http:' : 'https:';
}

interface Challenge {
  realm: string;
  service?: string;
  scope?: string;
}

/** `Bearer realm="…",service="…",scope="…"`; undefined for any other scheme. */
export function parseBearerChallenge(header: string | string[] | undefined): Challenge | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value || !/^bearer\s/i.test(value)) return undefined;
  const params = Object.fromEntries([...value.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]?.toLowerCase(), m[2]]));
  if (!params.realm) return undefined;
  return { realm: params.realm, ...(params.service ? { service: params.service } : {}), ...(params.scope ? { scope: params.scope } : {}) };
}

function tokenOf(bytes: Buffer): string {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    body = undefined;
  }
  const { token, access_token: accessToken } = (body ?? {}) as Record<string, unknown>;
  const value = typeof token === 'string' ? token : accessToken;
  if (typeof value !== 'string' || !TOKEN.test(value))
    throw new SourceError('invalid_source', "the registry's token service gave no usable token");
  return value;
}

/**
 * Requests to one repository of one registry, anonymously: public registries answer the first
 * pull with 401 and a Bearer challenge, the token service hands out a pull token to anyone, and
 * the request is sent again with it. The token goes only to the registry's own origin, never to
 * where a blob redirects (object storage) and never with credentials of the hub's.
 */
export class RegistrySession {
  private authorization: { origin: string; value: string } | undefined;

  constructor(
    private readonly http: SourceHttp,
    private readonly origin: string,
    private readonly repository: string,
  ) {}

  async get(path: string, options: { what: string; maxBytes: number; accept?: string }): Promise<SourceResponse> {
    const url = new URL(path, this.origin);
    const request = () =>
      this.http.get(url, {
        what: options.what,
        maxBytes: options.maxBytes,
        ...(options.accept ? { headers: { accept: options.accept } } : {}),
        ...(this.authorization ? { authorization: this.authorization } : {}),
      });
    let res = await request();
    if (res.status === 401 && !this.authorization) {
      const challenge = parseBearerChallenge(res.headers['www-authenticate']);
      if (challenge) {
        this.authorization = { origin: url.origin, value: `Bearer ${await this.token(challenge)}` };
        res = await request();
      }
    }
    if (res.status === 401 || res.status === 403) {
      throw new SourceError('source_not_found', `${options.what} was not found, or is not public (${res.status} from ${url.host})`);
    }
    if (res.status !== 200) throw statusError(res, options.what);
    return res;
  }

  private async token(challenge: Challenge): Promise<string> {
    const realm = URL.parse(challenge.realm);
    if (!realm) throw new SourceError('invalid_source', "the registry's token service URL is invalid");
    if (challenge.service) realm.searchParams.set('service', challenge.service);
    realm.searchParams.set('scope', challenge.scope ?? `repository:${this.repository}:pull`);
    const res = await this.http.get(realm, {
      what: "the registry's token",
      maxBytes: TOKEN_MAX_BYTES,
      headers: { accept: 'application/json' },
    });
    if (res.status !== 200) throw statusError(res, "the registry's token");
    return tokenOf(res.bytes);
  }
}

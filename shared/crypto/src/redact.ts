import { isIP } from 'node:net';

/**
 * Error texts about a webhook attempt are stored (`last_error`, audit details) and shown through
 * the api, while the webhook's URL is encrypted at rest. Socket errors name the peer
 * ("connect ECONNREFUSED 10.1.2.3:8080"), agents report reqwest/undici messages with the whole
 * URL, and receivers answer with arbitrary bytes. `sanitizeErrorText` removes the endpoint (the
 * known URL and its host, then anything shaped like a URL, an IP address or host:port), replaces
 * control and format characters (a NUL cannot even be stored in a Postgres text column; bidi
 * overrides disguise text) and bounds the length.
 */

export const ENDPOINT = '<endpoint>';
export const URL_PLACEHOLDER = '<url>';

export interface SanitizeOptions {
  /** URLs or host names known to be the target; removed wherever they appear. */
  endpoints?: ReadonlyArray<string | undefined>;
  /** Longest result in UTF-16 code units (default 1000). */
  maxLength?: number;
}

const DEFAULT_MAX = 1000;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The URL itself, its origin, host:port and bare host name, longest first. */
function knownForms(endpoint: string): string[] {
  const forms = new Set<string>([endpoint]);
  try {
    const url = new URL(endpoint);
    forms
      .add(url.href)
      .add(url.origin)
      .add(url.host)
      .add(url.hostname)
      .add(url.hostname.replace(/^\[|\]$/g, ''));
  } catch {
    // A bare host name: only the literal text is known.
  }
  return [...forms].filter((f) => f.length >= 3).sort((a, b) => b.length - a.length);
}

function removeKnown(text: string, endpoints: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const endpoint of endpoints) {
    if (!endpoint) continue;
    for (const form of knownForms(endpoint)) out = out.replace(new RegExp(escapeRegExp(form), 'gi'), ENDPOINT);
  }
  return out;
}

const URLS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()]+/gi;
const BRACKETED_V6 = /\[[0-9a-f:.%\w-]*\](?::\d{1,5})?/gi;
const BARE_V6 = /(?<![\w:.])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f.]*(?![\w:])/gi;
const V4_WITH_PORT = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g;
// A name with at least one letter (so a time such as 12:34:56 stays), then :port.
const HOST_PORT = /\b(?=[a-z0-9.-]*[a-z])[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*:\d{1,5}\b/gi;
const DNS_FAILURE = /\b(getaddrinfo|querya{0,4}|lookup) (ENOTFOUND|EAI_AGAIN|ESERVFAIL|ENODATA|ETIMEOUT) \S+/gi;
// What is left around a replaced host: brackets and a port ("[<endpoint>]:8080", "<endpoint>:8080").
const LEFTOVER = /\[?<endpoint>\]?(?::\d{1,5})?/g;

/** An IPv6 literal, possibly followed by :port (Node prints "::1:8080"). */
function v6Candidate(match: string): string {
  if (isIP(match) === 6) return ENDPOINT;
  const withoutPort = match.replace(/:\d{1,5}$/, '');
  return withoutPort !== match && isIP(withoutPort) === 6 ? ENDPOINT : match;
}

/** Anything shaped like an address, whichever target it names. */
export function redactEndpoints(text: string, endpoints: ReadonlyArray<string | undefined> = []): string {
  return removeKnown(text, endpoints)
    .replace(URLS, URL_PLACEHOLDER)
    .replace(BRACKETED_V6, ENDPOINT)
    .replace(BARE_V6, v6Candidate)
    .replace(V4_WITH_PORT, ENDPOINT)
    .replace(HOST_PORT, ENDPOINT)
    .replace(DNS_FAILURE, (_m, fn: string, code: string) => `${fn} ${code} ${ENDPOINT}`)
    .replace(LEFTOVER, ENDPOINT);
}

/** Control (C0, DEL, C1), format (bidi overrides, zero-width) and lone surrogate code points become spaces. */
export function stripControlCharacters(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Cs}]+/gu, ' ');
}

/** Cuts to `max` code units without leaving half a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

export function sanitizeErrorText(text: string, options: SanitizeOptions = {}): string {
  const max = options.maxLength ?? DEFAULT_MAX;
  // Bound the work first: an agent may report a megabyte of text.
  const bounded = truncate(text, max * 4);
  return truncate(stripControlCharacters(redactEndpoints(bounded, options.endpoints)).trim(), max);
}

/**
 * What a subscription's `auth_header` may hold. It is sent verbatim as `Authorization`, and every
 * HTTP stack on the way (Node's http, undici, Brokkr's Rust agent, proxies) must accept it
 * unchanged: printable ASCII and tab only. A line break, NUL, a bidi override (U+202E) or an
 * emoji makes Node throw when the request is built — a 500 on the test endpoint and a delivery
 * retried until dead before this check existed.
 */

export const MAX_HEADER_VALUE_LENGTH = 8192;

const PRINTABLE_ASCII_OR_TAB = /^[\t\x20-\x7e]*$/;

/** Why `value` cannot be an HTTP header value, or undefined when it can. */
export function headerValueProblem(value: string): string | undefined {
  if (value.length > MAX_HEADER_VALUE_LENGTH) return `must be at most ${MAX_HEADER_VALUE_LENGTH} characters`;
  if (!PRINTABLE_ASCII_OR_TAB.test(value)) {
    return 'must contain only printable ASCII characters (no line breaks, control characters or non-ASCII text)';
  }
  return undefined;
}

export function isValidHeaderValue(value: string): boolean {
  return headerValueProblem(value) === undefined;
}

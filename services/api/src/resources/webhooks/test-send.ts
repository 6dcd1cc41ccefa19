import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { assertLiteralHostAllowed, guardedLookup, sanitizeErrorText } from '@brokkr/crypto';

export interface TestSendInput {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export type TestSendResult = { kind: 'response'; status: number; body: string } | { kind: 'error'; message: string };

/**
 * The most of a receiver's answer that is ever shown (Brokkr: 500 characters). The test endpoint
 * must not be a way to read internal services through the hub, so only a short excerpt goes
 * back, with control characters and anything shaped like an address replaced.
 */
export const MAX_BODY_EXCERPT = 256;
const READ_LIMIT = MAX_BODY_EXCERPT * 4;

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      // Only the start is reported; stop reading a large body.
      if (text.length > READ_LIMIT) res.destroy();
    });
    res.on('end', () => resolve(text));
    res.on('close', () => resolve(text));
    res.on('error', () => resolve(text));
  });
}

function failure(err: Error, url: string): TestSendResult {
  const message = err.name === 'AbortError' ? 'timed out' : err.message;
  return { kind: 'error', message: sanitizeErrorText(message, { endpoints: [url], maxLength: MAX_BODY_EXCERPT }) };
}

/**
 * One POST for `POST /webhooks/{id}/test`, through the same SSRF guard as the dispatcher: IP
 * literals are checked up front, host names at their DNS lookup (the address connected to).
 * node:http is enough for a single request; redirects are not followed. Never rejects: building
 * the request throws for a header Node refuses, and that is a failed test send like any other.
 * Messages and the body excerpt never contain the endpoint.
 */
export function sendTestWebhook(input: TestSendInput): Promise<TestSendResult> {
  return new Promise((resolve) => {
    try {
      const url = new URL(input.url);
      if (!input.allowPrivateNetworks) assertLiteralHostAllowed(url.hostname);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, {
        method: 'POST',
        headers: { ...input.headers, 'content-length': String(Buffer.byteLength(input.body)) },
        signal: AbortSignal.timeout(input.timeoutMs),
        ...(input.allowPrivateNetworks ? {} : { lookup: guardedLookup }),
      });
      req.on('response', (res) => {
        void readBody(res).then((body) =>
          resolve({
            kind: 'response',
            status: res.statusCode ?? 0,
            body: sanitizeErrorText(body, { endpoints: [input.url], maxLength: MAX_BODY_EXCERPT }),
          }),
        );
      });
      req.on('error', (err) => resolve(failure(err, input.url)));
      req.end(input.body);
    } catch (err) {
      resolve(failure(err as Error, input.url));
    }
  });
}

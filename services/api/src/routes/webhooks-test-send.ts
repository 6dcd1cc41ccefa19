import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { assertLiteralHostAllowed, guardedLookup } from '@brokkr/crypto';

export interface TestSendInput {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export type TestSendResult = { kind: 'response'; status: number; body: string } | { kind: 'error'; message: string };

const MAX_BODY_CHARS = 500;

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      // Only the start is reported; stop reading a large body.
      if (text.length > MAX_BODY_CHARS * 4) res.destroy();
    });
    res.on('end', () => resolve(text.slice(0, MAX_BODY_CHARS)));
    res.on('close', () => resolve(text.slice(0, MAX_BODY_CHARS)));
    res.on('error', () => resolve(text.slice(0, MAX_BODY_CHARS)));
  });
}

/**
 * One POST for `POST /webhooks/{id}/test`, through the same SSRF guard as the dispatcher: IP
 * literals are checked up front, host names at their DNS lookup (the address connected to).
 * node:http is enough for a single request; redirects are not followed.
 */
export function sendTestWebhook(input: TestSendInput): Promise<TestSendResult> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(input.url);
      if (!input.allowPrivateNetworks) assertLiteralHostAllowed(url.hostname);
    } catch (err) {
      resolve({ kind: 'error', message: (err as Error).message });
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      headers: { ...input.headers, 'content-length': String(Buffer.byteLength(input.body)) },
      signal: AbortSignal.timeout(input.timeoutMs),
      ...(input.allowPrivateNetworks ? {} : { lookup: guardedLookup }),
    });
    req.on('response', (res) => {
      void readBody(res).then((body) => resolve({ kind: 'response', status: res.statusCode ?? 0, body }));
    });
    req.on('error', (err) => resolve({ kind: 'error', message: err.name === 'AbortError' ? 'timed out' : err.message }));
    req.end(input.body);
  });
}

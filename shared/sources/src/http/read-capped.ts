import type { Readable } from 'node:stream';
import { SourceError } from '../errors.ts';

function tooLarge(what: string, maxBytes: number): SourceError {
  return new SourceError('source_too_large', `${what} is larger than ${maxBytes} bytes`, { max_bytes: maxBytes });
}

/**
 * Reads a response body of at most `maxBytes`: a Content-Length above it is refused before
 * reading, and a body without one (or lying about it) is cut off as soon as it passes the cap,
 * so no more than `maxBytes` (plus one chunk) is ever held in memory.
 */
export async function readCapped(
  body: Readable,
  contentLength: string | string[] | undefined,
  maxBytes: number,
  what: string,
): Promise<Buffer> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    throw tooLarge(what, maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge(what, maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

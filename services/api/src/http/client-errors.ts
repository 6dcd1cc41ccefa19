import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from '../errors/api-error.ts';

interface ClientErrorAnswer {
  status: number;
  code: string;
  message: string;
}

// Node's own choice of status per parser error (what it answers without a listener), with a code.
const ANSWERS: Record<string, ClientErrorAnswer> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', message: 'Request headers are too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'payload_too_large', message: 'Chunk extensions are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', message: 'The request was not received in time' },
};
const MALFORMED: ClientErrorAnswer = { status: 400, code: 'invalid_request', message: 'The request could not be parsed as HTTP/1.1' };

/** A complete HTTP/1.1 response with a JSON error body, written straight to the socket. */
export function rawJsonResponse(answer: ClientErrorAnswer, details?: Record<string, unknown>): string {
  const body = JSON.stringify(errorBody(answer.code, answer.message, details));
  return [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

// A response of this connection already on the wire: another one would corrupt it.
function responseStarted(socket: Duplex): boolean {
  return (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
}

/**
 * Errors Node's HTTP parser raises before express sees a request (bad framing such as both
 * Content-Length and Transfer-Encoding, an oversized header block, a garbled request line) get the
 * same JSON `{code, message, details}` as every other error instead of Node's empty
 * body, wherever an answer can still be written. The connection is closed afterwards: the
 * parser cannot find the next request on it.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const answer = (err.code && ANSWERS[err.code]) || MALFORMED;
    socket.end(rawJsonResponse(answer, err.code ? { reason: err.code } : undefined), () => socket.destroy());
  });
}

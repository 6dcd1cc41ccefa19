import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createGenerator, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `request` as is on a fresh TCP connection and reads until the server closes it. Every
 * case here must end with the server answering and closing the connection; a held connection
 * shows up as the test's timeout.
 */
function rawExchange(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may reset a connection whose request it did not read to the end.
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!Number.isInteger(status)) return reject(new Error(`no HTTP response before the connection closed: ${JSON.stringify(text)}`));
      const headers = Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status, headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}

/**
 * Sends a chunked body without end (64 KiB chunks, up to `maxBytes`) until the server answers;
 * the answer must come without the body being finished.
 */
function chunkedUntilAnswered(port: number, head: string, maxBytes: number): Promise<{ response: RawResponse; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sentBytes = 0;
    let received = '';
    const pump = () => {
      while (received === '' && sentBytes < maxBytes && !socket.destroyed) {
        sentBytes += chunk.length;
        if (!socket.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]))) return;
      }
    };
    socket.on('drain', pump);
    socket.on('data', (data: Buffer) => (received += data.toString('utf8')));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      const [head = '', ...rest] = received.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      if (!Number.isInteger(status)) return reject(new Error(`no answer after ${sentBytes} bytes`));
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ response: { status, headers, body: rest.join('\r\n\r\n') }, sentBytes });
    });
    socket.write(head);
    pump();
  });
}

function expectJsonError(res: RawResponse, status: number, code: string): Record<string, unknown> {
  expect(res.status, res.body).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(body.code).to.equal(code);
  expect(body.message).to.be.a('string').and.not.equal('');
  return body;
}

describe('api HTTP input hardening', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let generator: { id: string; client: ApiClient; pak: string };

  before(async () => {
    api = await startTestApi(infra);
    const created = await createGenerator(api.admin);
    generator = { id: created.generator.id, client: created.client, pak: created.client.pak! };
  });

  after(async () => {
    await api?.stop();
  });

  describe('Content-Length over the body limit', () => {
    // The default limit is 2 MiB; only the headers and a few bytes of the body are ever sent.
    const declaringHuge = (auth: string) =>
      `POST /api/v1/stacks HTTP/1.1\r\nHost: test\r\n${auth}Content-Type: application/json\r\nContent-Length: 104857600\r\n\r\n{"name":`;

    it('answers 413 payload_too_large at once, without waiting for the body, and closes the connection', async () => {
      const res = await rawExchange(api.port, declaringHuge(`Authorization: Bearer ${generator.pak}\r\n`));
      const body = expectJsonError(res, 413, 'payload_too_large');
      expect(body.details).to.deep.equal({ limit_bytes: 2 * 1024 * 1024, content_length: 104857600 });
      expect(res.headers.connection).to.equal('close');
    });

    it('does so before authentication too', async () => {
      expectJsonError(await rawExchange(api.port, declaringHuge('')), 413, 'payload_too_large');
    });

    it('answers a chunked body without end with 413 once the limit is passed, without reading the rest', async () => {
      const head = `POST /api/v1/stacks HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${generator.pak}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
      // Up to 64 MiB would be sent; the answer has to come long before (the limit is 2 MiB).
      const { response, sentBytes } = await chunkedUntilAnswered(api.port, head, 64 * 1024 * 1024);
      expectJsonError(response, 413, 'payload_too_large');
      expect(response.headers.connection).to.equal('close');
      expect(sentBytes).to.be.below(64 * 1024 * 1024);
    });

    it('limits the decompressed size of a gzip body (413), reads a small one (201), refuses an unknown encoding (415)', async () => {
      const send = (body: Buffer, encoding: string) =>
        generator.client.request('POST', '/stacks', {
          raw: body,
          contentType: 'application/json',
          headers: { 'content-encoding': encoding },
        });
      const name = uniqueName('gzipped');
      const small = await send(gzipSync(JSON.stringify({ name, generator_id: generator.id })), 'gzip');
      expect(small.status, small.text).to.equal(201);
      expect(small.body.name).to.equal(name);
      // 8 MiB of spaces compress to a few KiB.
      const bomb = gzipSync(
        Buffer.concat([
          Buffer.from(`{"name":"bomb","generator_id":"${generator.id}"`),
          Buffer.alloc(8 * 1024 * 1024, ' '),
          Buffer.from('}'),
        ]),
      );
      expect(bomb.length).to.be.below(64 * 1024);
      const big = await send(bomb, 'gzip');
      expect(big.status, big.text).to.equal(413);
      expect(big.body.code).to.equal('payload_too_large');
      const unknown = await send(Buffer.from('{}'), 'compress');
      expect(unknown.status, unknown.text).to.equal(415);
      expect(unknown.body).to.deep.include({ code: 'unsupported_media_type', details: { content_encoding: 'compress' } });
    });

    it('leaves bodies within the limit alone', async () => {
      const res = await generator.client.post('/stacks', { name: uniqueName('fits'), generator_id: generator.id });
      expect(res.status, res.text).to.equal(201);
    });
  });

  describe("errors of Node's HTTP parser are JSON too", () => {
    it('400 invalid_request for ambiguous framing (Content-Length with Transfer-Encoding: chunked)', async () => {
      const res = await rawExchange(
        api.port,
        'POST /api/v1/stacks HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      );
      const body = expectJsonError(res, 400, 'invalid_request');
      expect(body.details).to.have.property('reason').that.match(/^HPE_/);
      expect(res.headers.connection).to.equal('close');
    });

    it('400 invalid_request for a request line that is not HTTP', async () => {
      expectJsonError(await rawExchange(api.port, 'HELLO THERE\r\n\r\n'), 400, 'invalid_request');
    });

    it('400 invalid_request for a malformed Content-Length', async () => {
      expectJsonError(
        await rawExchange(api.port, 'POST /api/v1/stacks HTTP/1.1\r\nHost: test\r\nContent-Length: 12abc\r\n\r\n'),
        400,
        'invalid_request',
      );
    });

    it('431 headers_too_large for a header block over the limit', async () => {
      const res = await rawExchange(api.port, `GET /healthz HTTP/1.1\r\nHost: test\r\nX-Padding: ${'a'.repeat(32 * 1024)}\r\n\r\n`);
      expect(expectJsonError(res, 431, 'headers_too_large').details).to.deep.equal({ reason: 'HPE_HEADER_OVERFLOW' });
    });

    it('the server keeps serving afterwards', async () => {
      expect((await api.anonymous.get('//healthz')).status).to.equal(200);
    });
  });

  describe('unpaired UTF-16 surrogates in JSON bodies', () => {
    it('refuses a lone surrogate in a string value with 400 invalid_json naming the field, storing nothing', async () => {
      const name = `lone-\ud800-${uniqueName('s')}`;
      // JSON.stringify escapes it as \ud800: valid JSON syntax, not valid Unicode.
      const res = await generator.client.post('/stacks', { name, generator_id: generator.id });
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.deep.include({ code: 'invalid_json', details: { reason: 'unpaired UTF-16 surrogate', path: 'name' } });
      const stored = await api.sql.query("SELECT count(*)::int AS n FROM stacks WHERE name LIKE 'lone-%'");
      expect(stored.rows[0].n).to.equal(0);
    });

    it('refuses one in a key or deep inside arrays, for every JSON route', async () => {
      const key = await api.admin.post('/generators', { name: uniqueName('g'), ['\udc00x']: 1 });
      expect(key.status, key.text).to.equal(400);
      expect(key.body.code).to.equal('invalid_json');
      const agent = await api.admin.post('/agents', {
        name: uniqueName('a'),
        cluster_name: 'c',
        generator_ids: [],
        extra: [[{ deep: 'x\udbff' }]],
      });
      expect(agent.status, agent.text).to.equal(400);
      expect(agent.body.details).to.deep.equal({ reason: 'unpaired UTF-16 surrogate', path: 'extra.0.0.deep' });
    });

    it('accepts proper surrogate pairs (emoji), escaped or not, and stores them unchanged', async () => {
      const name = `emoji-😀-${uniqueName('s')}`;
      const plain = await generator.client.post('/stacks', { name, generator_id: generator.id });
      expect(plain.status, plain.text).to.equal(201);
      expect(plain.body.name).to.equal(name);
      const escapedName = uniqueName('escaped');
      const escaped = await generator.client.request('POST', '/stacks', {
        raw: `{"name":"${escapedName}-\\ud83d\\ude00","generator_id":"${generator.id}"}`,
        contentType: 'application/json',
      });
      expect(escaped.status, escaped.text).to.equal(201);
      expect(escaped.body.name).to.equal(`${escapedName}-😀`);
    });
  });
});

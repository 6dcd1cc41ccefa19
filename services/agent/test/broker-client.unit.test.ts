import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { BrokerClient } from '../src/broker/client.ts';

/**
 * What the agent reads from a target-state answer besides the objects: the ETag, and how often the
 * hub wants polling agents to ask (`Brokkr-Poll-Interval`, BROKKR__BROKER__AGENT_POLL_SECONDS).
 * A plain HTTP server stands in for the hub's one endpoint.
 */
describe('agent broker client: target state', () => {
  let server: Server;
  let url: string;
  let header: string | undefined;

  before(async () => {
    server = createServer((req, res) => {
      const headers: Record<string, string> = { etag: '"ts-1"', 'content-type': 'application/json' };
      if (header !== undefined) headers['brokkr-poll-interval'] = header;
      if (req.headers['if-none-match'] === '"ts-1"') {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, headers).end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const ask = (etag?: string) => new BrokerClient(url, 'pak').targetState({ agentId: 'a', etag, waitSeconds: 0 });

  it('reads the hub poll interval on 200 and 304', async () => {
    header = '45';
    expect(await ask()).to.include({ changed: true, pollSeconds: 45 });
    expect(await ask('"ts-1"')).to.include({ changed: false, pollSeconds: 45 });
  });

  it('ignores an absent, zero or malformed interval', async () => {
    for (const value of [undefined, '0', 'soon', '-5', '1.5']) {
      header = value;
      expect(await ask(), String(value)).to.not.have.property('pollSeconds');
    }
  });
});

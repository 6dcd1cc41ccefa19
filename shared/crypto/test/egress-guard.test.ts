import { lookup as dnsLookup } from 'node:dns';
import { expect } from 'chai';
import { assertLiteralHostAllowed, guardedLookup, isForbiddenAddress, EgressBlockedError } from '../src/index.ts';

function guarded(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    guardedLookup(host, { family: 0 }, (err, address) => (err ? reject(err) : resolve(String(address))));
  });
}

describe('egress guard (SSRF)', () => {
  it('refuses private, loopback, link-local, CGNAT, ULA, metadata and unspecified addresses', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.169.254',
      '0.0.0.0', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::1]', '224.0.0.1']) {
      expect(isForbiddenAddress(ip), ip).to.equal(true);
    }
  });

  it('allows public addresses', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isForbiddenAddress(ip), ip).to.equal(false);
    }
  });

  it('checks IP literals up front (sockets skip the lookup for them)', () => {
    expect(() => assertLiteralHostAllowed('127.0.0.1')).to.throw(EgressBlockedError);
    expect(() => assertLiteralHostAllowed('[::1]')).to.throw(EgressBlockedError);
    expect(() => assertLiteralHostAllowed('8.8.8.8')).to.not.throw();
    expect(() => assertLiteralHostAllowed('example.com')).to.not.throw();
  });

  it('fails a lookup that only resolves to forbidden addresses', async () => {
    const err = await guarded('localhost').then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(EgressBlockedError);
  });

  it('passes through resolution errors unchanged', async () => {
    const direct = await new Promise<NodeJS.ErrnoException | null>((r) => dnsLookup('does-not-exist.invalid', (e) => r(e)));
    const err = await guarded('does-not-exist.invalid').then(() => undefined, (e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).to.equal(direct?.code);
  });
});

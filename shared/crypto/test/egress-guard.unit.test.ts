import { lookup as dnsLookup } from 'node:dns';
import { networkInterfaces } from 'node:os';
import { expect } from 'chai';
import { assertLiteralHostAllowed, guardedLookup, isForbiddenAddress, EgressBlockedError } from '../src/index.ts';
import { useInterfaceReader } from '../src/host-addresses.ts';

function guarded(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    guardedLookup(host, { family: 0 }, (err, address) => (err ? reject(err) : resolve(String(address))));
  });
}

describe('egress guard (SSRF)', () => {
  it('refuses private, loopback, link-local, CGNAT, ULA, metadata and unspecified addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '[::1]',
      '224.0.0.1',
    ]) {
      expect(isForbiddenAddress(ip), ip).to.equal(true);
    }
  });

  it('refuses every IANA IPv4 special-purpose range, multicast and broadcast', () => {
    for (const ip of [
      '0.1.2.3',
      '100.127.255.255',
      '192.0.0.8',
      '192.0.0.170',
      '192.0.2.1',
      '192.0.2.255',
      '192.31.196.1',
      '192.52.193.1',
      '192.88.99.1',
      '192.175.48.1',
      '198.18.0.1',
      '198.19.255.255',
      '198.51.100.7',
      '203.0.113.9',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
    ]) {
      expect(isForbiddenAddress(ip), ip).to.equal(true);
    }
  });

  it('refuses the IPv6 special-purpose ranges and whatever lies outside global unicast', () => {
    for (const ip of [
      '::2',
      '::127.0.0.1',
      '100::1',
      '100:0:0:1::1',
      '2001::1',
      '2001:0:4136:e378::1',
      '2001:2::1',
      '2001:10::1',
      '2001:20::1',
      '2001:db8::1',
      '2001:db8:ffff::1',
      '3fff::1',
      '5f00::1',
      'fec0::1',
      'ff02::1',
      'febf::1',
      '4000::1',
      '1::1',
      'e000::1',
      '64:ff9b:1::a00:1',
    ]) {
      expect(isForbiddenAddress(ip), ip).to.equal(true);
    }
  });

  it('judges IPv6 forms that embed an IPv4 address by that address (mapped, NAT64, 6to4)', () => {
    for (const ip of [
      '::ffff:192.0.2.1',
      '::ffff:c000:201',
      '64:ff9b::10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      '2002:a00:1::',
      '2002:c000:0201::1',
      '[::ffff:169.254.169.254]',
    ]) {
      expect(isForbiddenAddress(ip), ip).to.equal(true);
    }
    for (const ip of ['::ffff:93.184.216.34', '64:ff9b::808:808', '2002:5db8:d822::1']) {
      expect(isForbiddenAddress(ip), ip).to.equal(false);
    }
  });

  it("refuses every address of the host's own interfaces, whatever its range", () => {
    const own = Object.values(networkInterfaces())
      .flatMap((entries) => entries ?? [])
      .map((e) => e.address);
    expect(own).to.not.be.empty;
    for (const ip of own) expect(isForbiddenAddress(ip), ip).to.equal(true);
    for (const ip of own.filter((a) => !a.includes(':'))) {
      expect(isForbiddenAddress(`::ffff:${ip}`), `::ffff:${ip}`).to.equal(true);
      expect(() => assertLiteralHostAllowed(ip), ip).to.throw(EgressBlockedError);
    }
  });

  it('refuses a public address once an interface of this host carries it, and re-reads the interfaces', () => {
    const publicIp = '93.184.216.34';
    expect(isForbiddenAddress(publicIp)).to.equal(false);
    const nic = { netmask: '255.255.255.0', mac: '02:00:00:00:00:01', internal: false, cidr: `${publicIp}/24` };
    try {
      useInterfaceReader(() => ({
        eth9: [
          { ...nic, address: publicIp, family: 'IPv4' },
          { ...nic, address: '2606:2800:220:1::1', family: 'IPv6', scopeid: 0 },
        ],
      }));
      expect(isForbiddenAddress(publicIp)).to.equal(true);
      expect(isForbiddenAddress(`::ffff:${publicIp}`)).to.equal(true);
      expect(isForbiddenAddress('2606:2800:220:1::1')).to.equal(true);
      expect(() => assertLiteralHostAllowed(publicIp)).to.throw(EgressBlockedError);
    } finally {
      useInterfaceReader();
    }
    expect(isForbiddenAddress(publicIp)).to.equal(false);
  });

  it('allows public addresses', () => {
    for (const ip of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '192.0.3.1',
      '198.20.0.1',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001::1',
      '::ffff:8.8.8.8',
      '2620:4f:8000::1',
    ]) {
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
    const err = await guarded('localhost').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(EgressBlockedError);
  });

  it('passes through resolution errors unchanged', async () => {
    const direct = await new Promise<NodeJS.ErrnoException | null>((r) => dnsLookup('does-not-exist.invalid', (e) => r(e)));
    const err = await guarded('does-not-exist.invalid').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as NodeJS.ErrnoException).code).to.equal(direct?.code);
  });
});

import { expect } from 'chai';
import { redactEndpoints, sanitizeErrorText } from '../src/index.ts';

describe('error text sanitizing (no endpoint in stored errors)', () => {
  it('replaces socket peers: IPv4, IPv6 and host:port', () => {
    expect(redactEndpoints('connect ECONNREFUSED 10.1.2.3:8080')).to.equal('connect ECONNREFUSED <endpoint>');
    expect(redactEndpoints('connect ECONNREFUSED ::1:8080')).to.equal('connect ECONNREFUSED <endpoint>');
    expect(redactEndpoints('connect ETIMEDOUT 2001:db8::5 (port 443)')).to.equal('connect ETIMEDOUT <endpoint> (port 443)');
    expect(redactEndpoints('peer [fd00::2]:9000 reset')).to.equal('peer <endpoint> reset');
    expect(redactEndpoints('socket hang up talking to hooks.internal.example:8443')).to.equal('socket hang up talking to <endpoint>');
    expect(redactEndpoints('getaddrinfo ENOTFOUND hooks.internal')).to.equal('getaddrinfo ENOTFOUND <endpoint>');
  });

  it('replaces whole URLs and the known target in every form', () => {
    const url = 'https://hooks.corp.example:8443/brokkr?token=abc';
    expect(
      redactEndpoints('error sending request for url (https://hooks.corp.example:8443/brokkr?token=abc): connection closed', [url]),
    ).to.equal('error sending request for url (<endpoint>): connection closed');
    expect(redactEndpoints('dns error: failed to lookup address information for hooks.corp.example', [url])).to.equal(
      'dns error: failed to lookup address information for <endpoint>',
    );
    expect(redactEndpoints('POST http://other.example/x failed')).to.equal('POST <url> failed');
    expect(redactEndpoints('refused by [10.0.0.5]:8080 and 10.0.0.5', ['http://10.0.0.5:8080/x'])).to.equal(
      'refused by <endpoint> and <endpoint>',
    );
    expect(redactEndpoints('refused by [fd00::2]:8080', ['http://[fd00::2]:8080/x'])).to.equal('refused by <endpoint>');
  });

  it('keeps ordinary text, status lines and times', () => {
    for (const text of [
      'HTTP 500 Internal Server Error: try again at 12:34:56',
      'timed out',
      'HTTP 429: slow down',
      'Request failed: socket hang up',
    ]) {
      expect(redactEndpoints(text)).to.equal(text);
    }
  });

  it('replaces control and format characters, and bounds the length without splitting a surrogate pair', () => {
    expect(sanitizeErrorText('bad\u0000body\r\nline\u202Eevil\u200b')).to.equal('bad body line evil');
    expect(sanitizeErrorText(`${'x'.repeat(9)}😀`, { maxLength: 10 })).to.equal('x'.repeat(9));
    expect(sanitizeErrorText('y'.repeat(10_000))).to.have.length(1000);
    expect(sanitizeErrorText('lone \ud800 surrogate')).to.equal('lone   surrogate');
  });
});

import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, sign, signatureHeaders } from '../src/index.ts';

describe('Standard Webhooks signing', () => {
  const body = JSON.stringify({ id: 'e1', event_type: 'stack.created', timestamp: '2026-01-01T00:00:00Z', data: { stack_id: 'x' } });

  it('generates whsec_ secrets of 32 random bytes', () => {
    const secret = generateSigningSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).to.have.length(32);
    expect(generateSigningSecret()).to.not.equal(secret);
  });

  it('produces signatures the reference standardwebhooks library verifies', () => {
    const secret = generateSigningSecret();
    const headers = signatureHeaders([secret], { id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', body });
    expect(headers['webhook-signature']).to.match(/^v1,/);
    expect(new Webhook(secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
    // A changed body or id must fail.
    expect(() => new Webhook(secret).verify(body + ' ', headers)).to.throw();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'other' })).to.throw();
  });

  it('matches the HMAC computed from the spec by hand', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const expected = createHmac('sha256', Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))
      .update(`msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}`)
      .digest('base64');
    expect(sign(secret, { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330, body: '{"test": 2432232314}' })).to.equal(
      `v1,${expected}`,
    );
  });

  it('signs with both secrets during a rotation; receivers holding either verify', () => {
    const fresh = generateSigningSecret();
    const old = generateSigningSecret();
    const headers = signatureHeaders([fresh, old], { id: 'evt-1', body });
    expect(headers['webhook-signature']!.split(' ')).to.have.length(2);
    expect(() => new Webhook(fresh).verify(body, headers)).to.not.throw();
    expect(() => new Webhook(old).verify(body, headers)).to.not.throw();
    expect(() => new Webhook(generateSigningSecret()).verify(body, headers)).to.throw();
  });

  it('omits the signature header when a subscription has no secret', () => {
    const headers = signatureHeaders([], { id: 'evt-2', body, timestamp: 1700000000 });
    expect(headers).to.deep.equal({ 'webhook-id': 'evt-2', 'webhook-timestamp': '1700000000' });
  });
});

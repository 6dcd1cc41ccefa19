import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { decrypt, decryptString, encrypt, keyFingerprint, loadWebhookKey, DecryptionError } from '../src/index.ts';

const HEX = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

describe('webhook envelope encryption', () => {
  const key = loadWebhookKey(HEX);

  it('round-trips text, including empty and non-ASCII values', () => {
    for (const value of ['https://hooks.example.com/x?token=s3cret', '', 'Bearer ünïcødé ✓']) {
      expect(decryptString(key, encrypt(key, value))).to.equal(value);
    }
  });

  it('writes 0x01 ‖ 12-byte nonce ‖ ciphertext ‖ 16-byte tag, readable by plain AES-256-GCM', () => {
    const plaintext = 'https://receiver.example/hook';
    const sealed = encrypt(key, plaintext);
    expect(sealed[0]).to.equal(0x01);
    expect(sealed.length).to.equal(1 + 12 + Buffer.byteLength(plaintext) + 16);
    // Decrypt with node:crypto directly, from the documented layout only.
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(HEX, 'hex'), sealed.subarray(1, 13));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const opened = Buffer.concat([decipher.update(sealed.subarray(13, sealed.length - 16)), decipher.final()]);
    expect(opened.toString()).to.equal(plaintext);
  });

  it('reads a v1 envelope built independently with node:crypto (what Brokkr writes)', () => {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(HEX, 'hex'), nonce);
    const body = Buffer.concat([cipher.update('Bearer abc'), cipher.final()]);
    const sealed = Buffer.concat([Buffer.of(1), nonce, body, cipher.getAuthTag()]);
    expect(decryptString(key, sealed)).to.equal('Bearer abc');
  });

  it('reads the legacy XOR format, with and without the 0x00 version byte', () => {
    const nonce = Buffer.alloc(16, 7); // first byte 7: not a version byte
    const mask = createHash('sha256').update(Buffer.from(HEX, 'hex')).update(nonce).digest();
    const plaintext = Buffer.from('https://legacy.example/a/rather/long/path/beyond/32/bytes');
    const xored = Buffer.from(plaintext.map((b, i) => b ^ mask[i % 32]!));
    expect(decrypt(key, Buffer.concat([Buffer.of(0), nonce, xored])).toString()).to.equal(plaintext.toString());
    expect(decrypt(key, Buffer.concat([nonce, xored])).toString()).to.equal(plaintext.toString());
  });

  it('rejects tampering, a wrong key and truncated data', () => {
    const sealed = encrypt(key, 'secret');
    for (const i of [5, 14, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[i] = bad[i]! ^ 0xff;
      expect(() => decrypt(key, bad)).to.throw(DecryptionError);
    }
    expect(() => decrypt(loadWebhookKey(HEX.replace('0', 'f')), sealed)).to.throw(DecryptionError);
    expect(() => decrypt(key, Buffer.of(1, 2, 3))).to.throw(DecryptionError);
    expect(() => decrypt(key, Buffer.alloc(0))).to.throw(DecryptionError);
  });

  it('fingerprints the key as hex of the first 8 bytes of its sha256', () => {
    const expected = createHash('sha256').update(Buffer.from(HEX, 'hex')).digest('hex').slice(0, 16);
    expect(key.fingerprint).to.equal(expected);
    expect(keyFingerprint(Buffer.from(HEX, 'hex'))).to.equal(expected);
    expect(key.configured).to.equal(true);
  });

  it('mints a random per-process key when none is configured, and rejects a malformed one', () => {
    const a = loadWebhookKey(undefined);
    const b = loadWebhookKey('');
    expect(a.configured).to.equal(false);
    expect(a.bytes).to.have.length(32);
    expect(a.fingerprint).to.not.equal(b.fingerprint);
    expect(() => loadWebhookKey('abc')).to.throw(/64 hexadecimal/);
  });
});

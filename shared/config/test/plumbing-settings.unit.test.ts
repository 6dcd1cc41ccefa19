import { expect } from 'chai';
import { ConfigError } from '@brokkr/errors';
import { apiConfigSchema, auditWriterConfigSchema, natsSettingsFrom, parseEnv } from '@brokkr/config';

const DB = { BROKKR__DATABASE__URL: 'postgres://u:p@localhost:5432/db' };
const nats = (env: Record<string, string>) => natsSettingsFrom(parseEnv(auditWriterConfigSchema, { ...DB, ...env }));

describe('the hub plumbing settings (docs/security.md)', () => {
  it('BROKKR__BROKER__TRUSTED_PROXIES takes addresses and CIDRs, and refuses anything else', () => {
    const ok = parseEnv(apiConfigSchema, { ...DB, BROKKR__BROKER__TRUSTED_PROXIES: '10.0.0.1, 10.0.0.0/8,fd00::/8 ,::1' });
    expect(ok.BROKKR__BROKER__TRUSTED_PROXIES).to.equal('10.0.0.1, 10.0.0.0/8,fd00::/8 ,::1');
    for (const bad of ['10.0.0.0/33', 'loopback', '10.0.0.1/8/8', 'fd00::/129', '10.0.0.*']) {
      expect(() => parseEnv(apiConfigSchema, { ...DB, BROKKR__BROKER__TRUSTED_PROXIES: bad }), bad).to.throw(
        ConfigError,
        'BROKKR__BROKER__TRUSTED_PROXIES',
      );
    }
  });

  it('NATS: no credentials by default; one way of authenticating; TLS from any TLS_* file', () => {
    expect(nats({})).to.deep.equal({ url: 'nats://127.0.0.1:4222' });
    expect(nats({ BROKKR__NATS__USER: 'u', BROKKR__NATS__PASSWORD: 'p' })).to.deep.include({ auth: { user: 'u', password: 'p' } });
    expect(nats({ BROKKR__NATS__CREDS_FILE: '/c' })).to.deep.include({ auth: { credsFile: '/c' } });
    expect(nats({ BROKKR__NATS__TLS_CA_FILE: '/ca' })).to.deep.include({ tls: { caFile: '/ca' } });
  });

  it('NATS: refuses two ways of authenticating and half-given pairs, naming them all at once', () => {
    const err = (() => {
      try {
        nats({
          BROKKR__NATS__TOKEN: 't',
          BROKKR__NATS__NKEY_SEED_FILE: '/s',
          BROKKR__NATS__PASSWORD: 'p',
          BROKKR__NATS__TLS_CERT_FILE: '/c',
        });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('accepted');
    })();
    expect(err).to.be.instanceOf(ConfigError);
    expect(err.issues).to.deep.equal([
      'BROKKR__NATS__USER and BROKKR__NATS__PASSWORD: set both or neither',
      'BROKKR__NATS__: set one of USER/PASSWORD, TOKEN, NKEY_SEED_FILE or CREDS_FILE',
      'BROKKR__NATS__TLS_CERT_FILE and BROKKR__NATS__TLS_KEY_FILE: set both or neither',
    ]);
  });
});

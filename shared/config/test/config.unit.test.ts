import { expect } from 'chai';
import { ConfigError } from '@brokkr/errors';
import {
  agentConfigSchema,
  apiConfigSchema,
  auditWriterConfigSchema,
  DEFAULT_ADMIN_PAK_HASH,
  fields,
  maintenanceConfigSchema,
  parseEnv,
  webhookDispatcherConfigSchema,
} from '@brokkr/config';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const HEX64 = 'a'.repeat(32) + '0123456789ABCDEF0123456789abcdef';

describe('@brokkr/config parseEnv', () => {
  it('reports every missing and invalid variable in one ConfigError', () => {
    const err = configError(() =>
      parseEnv(agentConfigSchema, {
        BROKKR__AGENT__POLLING_INTERVAL: 'often',
        BROKKR__LOG__LEVEL: 'loud',
        BROKKR__AGENT__HEALTH_PORT: '70000',
      }),
    );
    expect(err.name).to.equal('ConfigError');
    for (const name of ['BROKKR__AGENT__PAK', 'BROKKR__AGENT__POLLING_INTERVAL', 'BROKKR__LOG__LEVEL', 'BROKKR__AGENT__HEALTH_PORT']) {
      expect(err.message).to.contain(name);
      expect(err.issues.some((issue) => issue.startsWith(`${name}:`))).to.equal(true, name);
    }
    expect(err.issues).to.have.length(4);
  });

  it('applies defaults and coerces types', () => {
    const config = parseEnv(apiConfigSchema, {});
    expect(config.BROKKR__BROKER__PORT).to.equal(3000);
    expect(config.BROKKR__BROKER__HOST).to.equal('0.0.0.0');
    expect(config.BROKKR__DATABASE__POOL_SIZE).to.equal(20);
    expect(config.BROKKR__DATABASE__SCHEMA).to.equal(undefined);
    expect(config.BROKKR__LOG__LEVEL).to.equal('info');
    expect(config.BROKKR__LOG__FORMAT).to.equal('json');
    expect(config.BROKKR__NATS__URL).to.equal('nats://127.0.0.1:4222');
    expect(config.BROKKR__TELEMETRY__ENABLED).to.equal(false);
    expect(config.BROKKR__TELEMETRY__SAMPLING_RATE).to.equal(0.1);
    expect(config.BROKKR__BROKER__PAK_HASH).to.equal(DEFAULT_ADMIN_PAK_HASH);
    expect(config.BROKKR__BROKER__TRUST_PROXY).to.equal(false);

    const tuned = parseEnv(apiConfigSchema, {
      BROKKR__BROKER__PORT: '8081',
      BROKKR__DATABASE__POOL_SIZE: '5',
      BROKKR__TELEMETRY__ENABLED: 'yes',
      BROKKR__BROKER__TRUST_PROXY: 'TRUE',
    });
    expect(tuned.BROKKR__BROKER__PORT).to.equal(8081);
    expect(tuned.BROKKR__DATABASE__POOL_SIZE).to.equal(5);
    expect(tuned.BROKKR__TELEMETRY__ENABLED).to.equal(true);
    expect(tuned.BROKKR__BROKER__TRUST_PROXY).to.equal(true);
  });

  it('gives each hub service its own health port default', () => {
    expect(parseEnv(webhookDispatcherConfigSchema, {}).BROKKR__HEALTH__PORT).to.equal(9101);
    expect(parseEnv(auditWriterConfigSchema, {}).BROKKR__HEALTH__PORT).to.equal(9102);
    expect(parseEnv(maintenanceConfigSchema, {}).BROKKR__HEALTH__PORT).to.equal(9103);
    expect(parseEnv(auditWriterConfigSchema, {}).BROKKR__AUDIT__BATCH_SIZE).to.equal(100);
  });

  it('reads the agent settings with Brokkr names and defaults', () => {
    const config = parseEnv(agentConfigSchema, { BROKKR__AGENT__PAK: 'brokkr_BRabcdef_xyz' });
    expect(config.BROKKR__AGENT__PAK).to.equal('brokkr_BRabcdef_xyz');
    expect(config.BROKKR__AGENT__BROKER_URL).to.equal('http://localhost:3000');
    expect(config.BROKKR__AGENT__POLLING_INTERVAL).to.equal(10);
    expect(config.BROKKR__AGENT__DEPLOYMENT_HEALTH_ENABLED).to.equal(true);
  });

  describe('BROKKR__BROKER__PAK_HASH', () => {
    it('accepts an empty value (mint a new admin PAK)', () => {
      expect(parseEnv(apiConfigSchema, { BROKKR__BROKER__PAK_HASH: '' }).BROKKR__BROKER__PAK_HASH).to.equal('');
    });

    it('accepts 64 hexadecimal characters', () => {
      expect(parseEnv(apiConfigSchema, { BROKKR__BROKER__PAK_HASH: HEX64 }).BROKKR__BROKER__PAK_HASH).to.equal(HEX64);
    });

    it('rejects anything else', () => {
      for (const bad of ['abc', HEX64.slice(1), `${HEX64}0`, 'g'.repeat(64)]) {
        const err = configError(() => parseEnv(apiConfigSchema, { BROKKR__BROKER__PAK_HASH: bad }));
        expect(err.message).to.contain('BROKKR__BROKER__PAK_HASH');
      }
    });
  });

  describe('database schema name', () => {
    it('accepts lower-case SQL identifiers', () => {
      for (const good of ['tenant_a', '_private', 'a', `t${'x'.repeat(62)}`]) {
        expect(parseEnv(apiConfigSchema, { BROKKR__DATABASE__SCHEMA: good }).BROKKR__DATABASE__SCHEMA).to.equal(good);
      }
    });

    it('rejects names that would need quoting or could inject SQL', () => {
      for (const bad of ['Tenant', 'a-b', '1abc', 'x"; DROP SCHEMA public; --', '', `t${'x'.repeat(63)}`]) {
        const err = configError(() => parseEnv(apiConfigSchema, { BROKKR__DATABASE__SCHEMA: bad }));
        expect(err.message).to.contain('BROKKR__DATABASE__SCHEMA');
        expect(fields.schemaName.safeParse(bad).success).to.equal(false, bad);
      }
    });
  });
});

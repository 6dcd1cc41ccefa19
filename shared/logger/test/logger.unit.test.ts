import { expect } from 'chai';
import { createLogger, maskSecrets, type Logger } from '@brokkr/logger';

// Shaped like a real PAK: brokkr_BR + 6 base58 characters + _ + base58 secret.
const PAK = 'brokkr_BRa1b2c3_4kT9xQ7mWzE2vH8rJc5sN6pL';
const SECRET_PART = '4kT9xQ7mWzE2vH8rJc5sN6pL';

function capture(level = 'trace'): { logger: Logger; lines: () => Record<string, unknown>[]; raw: () => string } {
  const chunks: string[] = [];
  const logger = createLogger({ service: 'logger-test', level }, { write: (line: string) => void chunks.push(line) });
  return {
    logger,
    lines: () => chunks.map((c) => JSON.parse(c) as Record<string, unknown>),
    raw: () => chunks.join(''),
  };
}

describe('@brokkr/logger', () => {
  it('writes JSON lines with the service and level to the destination', () => {
    const { logger, lines } = capture();
    logger.info({ deliveryId: 'd-1' }, 'delivered');
    const [line] = lines();
    expect(line).to.include({ service: 'logger-test', msg: 'delivered', deliveryId: 'd-1', level: 30 });
    expect(line!.time).to.be.a('string');
  });

  it('respects the level', () => {
    const { logger, lines } = capture('warn');
    logger.info('hidden');
    logger.warn('shown');
    expect(lines().map((l) => l.msg)).to.deep.equal(['shown']);
  });

  it('redacts Authorization headers', () => {
    const { logger, lines, raw } = capture();
    logger.info({ req: { method: 'GET', headers: { authorization: `Bearer ${PAK}`, 'user-agent': 'curl' } } }, 'request');
    logger.info({ headers: { authorization: 'Bearer webhook-token' } }, 'outbound');
    logger.info({ authorization: 'Bearer bare' }, 'bare');
    const [request, outbound, bare] = lines();
    expect((request!.req as { headers: Record<string, string> }).headers).to.deep.equal({
      authorization: '[REDACTED]',
      'user-agent': 'curl',
    });
    expect((outbound!.headers as Record<string, string>).authorization).to.equal('[REDACTED]');
    expect(bare!.authorization).to.equal('[REDACTED]');
    expect(raw()).to.not.contain(SECRET_PART);
    expect(raw()).to.not.contain('webhook-token');
  });

  it('redacts PAKs, signing secrets and webhook auth headers at the top level and one level down', () => {
    const { logger, raw, lines } = capture();
    logger.info({ pak: PAK, initial_pak: PAK, signing_secret: 'whsec_top', auth_header: 'Bearer top' }, 'top');
    logger.info(
      {
        agent: { name: 'a1', pak: PAK, initial_pak: PAK },
        subscription: { id: 's-1', signing_secret: 'whsec_nested', auth_header: 'Bearer nested' },
      },
      'nested',
    );
    const [top, nested] = lines();
    expect(top).to.include({ pak: '[REDACTED]', initial_pak: '[REDACTED]', signing_secret: '[REDACTED]', auth_header: '[REDACTED]' });
    expect(nested!.agent).to.deep.equal({ name: 'a1', pak: '[REDACTED]', initial_pak: '[REDACTED]' });
    expect(nested!.subscription).to.deep.equal({ id: 's-1', signing_secret: '[REDACTED]', auth_header: '[REDACTED]' });
    for (const secret of [SECRET_PART, 'whsec_top', 'whsec_nested', 'Bearer top', 'Bearer nested']) {
      expect(raw()).to.not.contain(secret);
    }
  });

  it('masks PAK-shaped substrings in messages', () => {
    const { logger, raw, lines } = capture();
    logger.warn(`agent presented ${PAK} which is unknown`);
    logger.error({ agentId: 'x' }, `rotation failed for ${PAK}`);
    const [first, second] = lines();
    expect(first!.msg).to.equal('agent presented brokkr_BR******_[REDACTED] which is unknown');
    expect(second!.msg).to.equal('rotation failed for brokkr_BR******_[REDACTED]');
    expect(raw()).to.not.contain(SECRET_PART);
  });

  it('masks every PAK in a text and leaves other text alone', () => {
    expect(maskSecrets(`${PAK} and ${PAK}`)).to.equal('brokkr_BR******_[REDACTED] and brokkr_BR******_[REDACTED]');
    expect(maskSecrets('brokkr_ is a prefix, nothing else')).to.equal('brokkr_ is a prefix, nothing else');
  });
});

describe('logger: nested and error secrets', () => {
  it('redacts capitalised Authorization headers and PAKs inside errors', async () => {
    const { Writable } = await import('node:stream');
    const { createLogger } = await import('../src/index.ts');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const logger = createLogger({ service: 'test' }, sink);
    const pak = 'brokkr_BR3rVsDa_GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8';
    logger.info({ request: { headers: { Authorization: `Bearer ${pak}` } } }, 'outgoing');
    logger.error({ err: new Error(`bad key ${pak}`) }, 'failed');
    const text = lines.join('');
    expect(text).to.not.include('GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8');
    expect(text).to.include('[REDACTED]');
  });
});

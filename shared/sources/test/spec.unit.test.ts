import { expect } from 'chai';
import { fetchSource, sourcePolicyFromConfig, sourceSpecSchema } from '../src/index.ts';
import { publicOnlyPolicy, sourceError } from './support/policy.ts';

const helm = (fields: Record<string, unknown>) => ({
  helm: { repository: 'https://charts.example.com', chart: 'demo', version: '0.1.0', ...fields },
});

describe('@brokkr/sources: the source spec', () => {
  it('accepts the three forms', () => {
    for (const spec of [
      helm({}),
      helm({ repository: 'oci://ghcr.io/org/charts' }),
      { kustomize: { archive: 'H4sIAAAAAAAAA+3BAQ0AAADCoPdPbQ8HFAAAAAAAAAAAAAAA', path: 'overlays/prod' } },
      { kustomize: { url: 'https://example.com/k.tar.gz', path: '.' } },
    ]) {
      expect(sourceSpecSchema.safeParse(spec).success, JSON.stringify(spec)).to.equal(true);
    }
  });

  it('refuses unknown fields, both kinds at once, and both kustomize forms at once', () => {
    for (const spec of [
      helm({ extra: 1 }),
      { ...helm({}), kustomize: { url: 'https://example.com/k.tar.gz', path: '.' } },
      { kustomize: { archive: 'AAAA', url: 'https://example.com/k.tar.gz', path: '.' } },
      {},
    ]) {
      expect(sourceSpecSchema.safeParse(spec).success, JSON.stringify(spec)).to.equal(false);
    }
  });

  it('refuses URLs with credentials, a query or another scheme, and overlong ones', () => {
    for (const repository of [
      'https://user:secret@charts.example.com',
      'https://charts.example.com/?token=x',
      'ftp://charts.example.com',
      'file:///etc',
      `https://charts.example.com/${'a'.repeat(2100)}`,
      'not a url',
    ]) {
      expect(sourceSpecSchema.safeParse(helm({ repository })).success, repository).to.equal(false);
    }
  });

  it('refuses chart names and versions that would change the path they are put in', () => {
    for (const fields of [
      { chart: '../demo' },
      { chart: 'a/b' },
      { chart: '.hidden' },
      { version: '1.0/../../x' },
      { version: '' },
      { chart: 'x'.repeat(251) },
    ]) {
      expect(sourceSpecSchema.safeParse(helm(fields)).success, JSON.stringify(fields)).to.equal(false);
    }
  });

  it('refuses archive paths that leave the archive, and archives that are not base64', () => {
    for (const kustomize of [
      { archive: 'AAAA', path: '../x' },
      { archive: 'AAAA', path: '/abs' },
      { archive: 'AAAA', path: 'a//b' },
      { archive: 'AAAA', path: '' },
      { archive: 'not base64!', path: '.' },
    ]) {
      expect(sourceSpecSchema.safeParse({ kustomize }).success, JSON.stringify(kustomize)).to.equal(false);
    }
  });

  it('fetchSource validates too: an invalid spec is invalid_source naming the field', async () => {
    const err = await sourceError(fetchSource(helm({ chart: '../x' }) as never, publicOnlyPolicy()), 'invalid_source');
    expect(err.message).to.match(/^source\.helm\.chart: /);
  });

  it("builds the api's policy from its settings: SOURCE_ALLOW_PRIVATE_NETWORKS unset follows the webhooks' switch", () => {
    const settings = {
      BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: true,
      BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: undefined,
      BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS: ' 10.1.2.3 , 10.8.0.0/16',
      BROKKR__BROKER__SOURCE_ALLOWED_HOSTS: 'charts.example.com,,*.pkg.dev',
      BROKKR__BROKER__SOURCE_MAX_BYTES: 1024,
      BROKKR__BROKER__SOURCE_TIMEOUT_SECONDS: 7,
    };
    expect(sourcePolicyFromConfig(settings)).to.deep.equal({
      allowPrivateNetworks: true,
      allowedHosts: ['charts.example.com', '*.pkg.dev'],
      allowedPrivateCidrs: ['10.1.2.3', '10.8.0.0/16'],
      maxBytes: 1024,
      timeoutMs: 7000,
    });
    expect(sourcePolicyFromConfig({ ...settings, BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: false }).allowPrivateNetworks).to.equal(
      false,
    );
  });
});

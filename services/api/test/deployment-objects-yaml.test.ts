import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { acceptsYaml, decodeUtf8, isYamlContentType, validateDeploymentYaml, yamlChecksum } from '../src/yaml/index.ts';

const plain = { isDeletionMarker: false };

describe('api yaml module (deployment-object content rules)', () => {
  it('accepts single and multi-document YAML with plain anchors', () => {
    expect(validateDeploymentYaml('kind: ConfigMap\n', plain)).to.deep.equal({ ok: true });
    expect(validateDeploymentYaml('a: 1\n---\nb: 2\n', plain)).to.deep.equal({ ok: true });
    expect(validateDeploymentYaml('---\nnull\n---\nkind: Pod\n', plain)).to.deep.equal({ ok: true });
    const anchors = `base: &base {cpu: 1}\n${Array.from({ length: 20 }, (_, i) => `c${i}: *base`).join('\n')}\n`;
    expect(validateDeploymentYaml(anchors, plain)).to.deep.equal({ ok: true });
  });

  it('rejects blank content unless it is a deletion marker, and still validates a marker with content', () => {
    expect(validateDeploymentYaml(' \n', plain).ok).to.equal(false);
    expect(validateDeploymentYaml(' \n', { isDeletionMarker: true }).ok).to.equal(true);
    expect(validateDeploymentYaml('a: [', { isDeletionMarker: true }).ok).to.equal(false);
  });

  it('rejects null-only streams, parse errors, alias bombs, NUL and lone surrogates with a reason', () => {
    const laughs = ['a: &a [x,x,x,x,x,x,x,x,x,x]', ...'bcdefgh'.split('').map((n, i) => `${n}: &${n} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(',')}]`)].join('\n');
    for (const content of ['~', '# only a comment', 'a: 1\na: 2', 'a: *missing', laughs, 'a: "\u0000"', 'a: \ud800']) {
      const verdict = validateDeploymentYaml(content, plain);
      expect(verdict.ok, content.slice(0, 30)).to.equal(false);
      if (!verdict.ok) expect(verdict.reason).to.be.a('string').and.not.equal('');
    }
  });

  it('decodes strict UTF-8 and keeps a byte-order mark', () => {
    expect(decodeUtf8(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).to.equal('\ufeffa');
    expect(decodeUtf8(Buffer.from([0xc3, 0x28]))).to.equal(undefined);
  });

  it('recognises the YAML media types', () => {
    for (const type of ['application/yaml', 'text/yaml', 'application/x-yaml', 'Application/YAML; charset=utf-8']) {
      expect(isYamlContentType(type), type).to.equal(true);
    }
    for (const type of [undefined, '', 'application/json', 'text/plain', 'application/yaml-ish']) expect(isYamlContentType(type)).to.equal(false);
    expect(acceptsYaml('application/json, text/yaml;q=0.1')).to.equal(true);
    expect(acceptsYaml('*/*')).to.equal(false);
    expect(acceptsYaml(undefined)).to.equal(false);
  });

  it('computes the lowercase hex SHA-256 of the UTF-8 bytes', () => {
    expect(yamlChecksum('')).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(yamlChecksum('é')).to.equal(createHash('sha256').update(Buffer.from([0xc3, 0xa9])).digest('hex'));
  });
});

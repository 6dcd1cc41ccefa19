import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  acceptsYaml,
  DEFAULT_YAML_LIMITS,
  decodeUtf8,
  isYamlContentType,
  validateDeploymentYaml,
  yamlChecksum,
} from '../src/yaml/index.ts';

const plain = { isDeletionMarker: false };
const small = { maxDocuments: 3, maxAnchors: 2, maxAliases: 2, maxNodes: 20, maxExpandedNodes: 30 };

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
    const laughs = [
      'a: &a [x,x,x,x,x,x,x,x,x,x]',
      ...'bcdefgh'.split('').map((n, i) => `${n}: &${n} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(',')}]`),
    ].join('\n');
    for (const content of ['~', '# only a comment', 'a: 1\na: 2', 'a: *missing', laughs, 'a: "\u0000"', 'a: \ud800']) {
      const verdict = validateDeploymentYaml(content, plain);
      expect(verdict.ok, content.slice(0, 30)).to.equal(false);
      if (!verdict.ok) expect(verdict.reason).to.be.a('string').and.not.equal('');
    }
  });

  it('refuses recursive aliases (an alias inside the node it names)', () => {
    for (const content of ['&a [*a]', 'a: &a {b: *a}']) {
      expect(validateDeploymentYaml(content, plain)).to.deep.equal({
        ok: false,
        reason: 'invalid YAML: Alias refers to a node that contains it: a',
      });
    }
  });

  it('names the limit a stream passes, and accepts a stream right at every limit', () => {
    const atLimits = '---\na: &x [1, 2]\nb: *x\n---\nc: &y 1\nd: *y\n---\ne: 3\n';
    expect(validateDeploymentYaml(atLimits, plain, small)).to.deep.equal({ ok: true });
    const cases: [string, string, number][] = [
      ['a: 1\n---\nb: 1\n---\nc: 1\n---\nd: 1\n', 'max_documents', 3],
      ['- &a 1\n- &b 2\n- &c 3\n', 'max_anchors', 2],
      ['- &a 1\n- *a\n- *a\n- *a\n', 'max_aliases', 2],
      [`[${Array(21).fill('1').join(', ')}]`, 'max_nodes', 20],
      // 15 nodes written, and each alias counts as the 11 nodes it names: 15 + 2 × 11 = 37.
      ['a: &x [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: *x\nc: *x\n', 'max_expanded_nodes', 30],
    ];
    for (const [content, limit, value] of cases) {
      const verdict = validateDeploymentYaml(content, plain, small);
      expect(verdict, limit).to.deep.include({ ok: false, limit: { limit, value } });
      if (!verdict.ok) expect(verdict.reason, limit).to.contain(limit).and.contain(String(value));
    }
  });

  it('refuses hostile shapes by their limit (32k anchors used once, 100k tiny documents, a flat million)', () => {
    const anchors = Array.from({ length: 32_000 }, (_, i) => `- &a${i} v${i}\n- *a${i}\n`).join('');
    const expect400 = (content: string, limit: string, value: number) =>
      expect(validateDeploymentYaml(content, plain), limit).to.deep.include({ ok: false, limit: { limit, value } });
    expect400(anchors, 'max_anchors', DEFAULT_YAML_LIMITS.maxAnchors);
    expect400('---\na: 1\n'.repeat(100_000), 'max_documents', DEFAULT_YAML_LIMITS.maxDocuments);
    expect400(`[${'1,'.repeat(1_000_000)}1]`, 'max_nodes', DEFAULT_YAML_LIMITS.maxNodes);
    // With the count limits lifted the same anchors still validate: resolution is linear now.
    const lifted = { ...DEFAULT_YAML_LIMITS, maxAnchors: 100_000, maxAliases: 100_000 };
    expect(validateDeploymentYaml(anchors, plain, lifted)).to.deep.equal({ ok: true });
  });

  it('decodes strict UTF-8 and keeps a byte-order mark', () => {
    expect(decodeUtf8(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).to.equal('\ufeffa');
    expect(decodeUtf8(Buffer.from([0xc3, 0x28]))).to.equal(undefined);
  });

  it('recognises the YAML media types', () => {
    for (const type of ['application/yaml', 'text/yaml', 'application/x-yaml', 'Application/YAML; charset=utf-8']) {
      expect(isYamlContentType(type), type).to.equal(true);
    }
    for (const type of [undefined, '', 'application/json', 'text/plain', 'application/yaml-ish'])
      expect(isYamlContentType(type)).to.equal(false);
    expect(acceptsYaml('application/json, text/yaml;q=0.1')).to.equal(true);
    expect(acceptsYaml('*/*')).to.equal(false);
    expect(acceptsYaml(undefined)).to.equal(false);
  });

  it('computes the lowercase hex SHA-256 of the UTF-8 bytes', () => {
    expect(yamlChecksum('')).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(yamlChecksum('é')).to.equal(
      createHash('sha256')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('hex'),
    );
  });
});

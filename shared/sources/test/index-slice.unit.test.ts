import { expect } from 'chai';
import { parse } from 'yaml';
import { sliceChartEntries } from '../src/helm/index-slice.ts';
import { findChartVersion } from '../src/helm/chart-index.ts';

/** What the slice parses to, or the result's kind when there is none. */
function sliced(text: string, chart: string): unknown {
  const result = sliceChartEntries(text, chart);
  return result.kind === 'slice' ? parse(result.text) : result.kind;
}

describe('@brokkr/sources: cutting one chart out of index.yaml', () => {
  it("cuts the chart written as helm repo index writes it (list items at the key's indentation)", () => {
    const index = [
      'apiVersion: v1',
      'entries:',
      '  alpha:',
      '  - version: 1.0.0',
      '  demo:',
      '  - version: 0.2.0',
      '    urls:',
      '    - demo-0.2.0.tgz',
      '  - version: 0.1.0',
      '  zulu:',
      '  - version: 3.0.0',
      'generated: "2026"',
    ].join('\n');
    expect(sliced(index, 'demo')).to.deep.equal({ demo: [{ version: '0.2.0', urls: ['demo-0.2.0.tgz'] }, { version: '0.1.0' }] });
    expect(sliced(index, 'zulu')).to.deep.equal({ zulu: [{ version: '3.0.0' }] });
    expect(sliced(index, 'dem')).to.equal('absent');
  });

  it('cuts a chart whose list is indented, with CRLF line ends, comments and a quoted key', () => {
    const index =
      'apiVersion: v1\r\n# comment\r\nentries:\r\n    # a comment at another indentation\r\n    "demo":\r\n        - version: 0.1.0\r\n    other:\r\n        - version: 1.0.0\r\n';
    expect(sliced(index, 'demo')).to.deep.equal({ demo: [{ version: '0.1.0' }] });
  });

  it("is not fooled by a block scalar whose lines look like the chart's key", () => {
    const index = [
      'entries:',
      '  alpha:',
      '  - description: |',
      '      demo:',
      '    demo:',
      '    version: 1.0.0',
      '  demo:',
      '  - description: |',
      '      other:',
      '    version: 0.1.0',
      '  other:',
      '  - version: 9.9.9',
    ].join('\n');
    expect(sliced(index, 'demo')).to.deep.equal({ demo: [{ description: 'other:\n', version: '0.1.0' }] });
  });

  it('knows an index without the chart, and declines layouts it does not know (flow style, no entries key)', () => {
    expect(sliced('apiVersion: v1\nentries:\ngenerated: x\n', 'demo')).to.equal('absent');
    expect(sliced('{"apiVersion": "v1", "entries": {"demo": []}}', 'demo')).to.equal('unrecognised');
    expect(sliced('entries: {demo: [{version: 0.1.0}]}\n', 'demo')).to.equal('unrecognised');
    expect(sliced('apiVersion: v1\n', 'demo')).to.equal('unrecognised');
  });

  it('reads every scalar as a string: version 1.10 stays 1.10, not the number 1.1', () => {
    const index = Buffer.from('entries:\n  demo:\n  - version: 1.10\n    urls: [a.tgz]\n  - version: 1.1\n    urls: [b.tgz]\n');
    expect(findChartVersion(index, 'demo', '1.10').urls).to.deep.equal(['a.tgz']);
  });
});

import { assertDigest, assertGzip, sha256Digest } from '../digest.ts';
import { SourceError } from '../errors.ts';
import { statusError, type SourceHttp } from '../http/client.ts';
import type { SourcePolicy } from '../policy.ts';
import type { HelmSpec } from '../spec.ts';
import type { FetchedSource } from '../fetched.ts';
import { findChartVersionOffThread } from './index-parser.ts';

const HEX_DIGEST = /^(?:sha256:)?([0-9a-f]{64})$/i;

/** The index's digest as `sha256:<hex>`; an index that gives something else is not trusted. */
function indexDigest(digest: string | undefined): string | undefined {
  if (digest === undefined) return undefined;
  const hex = HEX_DIGEST.exec(digest)?.[1];
  if (!hex) throw new SourceError('invalid_source', `the repository's index gives an invalid digest for the chart: ${digest.slice(0, 80)}`);
  return `sha256:${hex.toLowerCase()}`;
}

/**
 * A chart from a classic chart repository: its index.yaml, the entry for chart@version, and the
 * .tgz at the entry's first URL (relative ones resolve against the repository URL, as Helm
 * does). The download must match the index's digest when it gives one; what is pinned is the
 * digest of the bytes downloaded either way.
 */
export async function fetchFromChartRepository(http: SourceHttp, spec: HelmSpec, policy: SourcePolicy): Promise<FetchedSource> {
  const base = new URL(spec.repository.endsWith('/') ? spec.repository : `${spec.repository}/`);
  const index = await http.get(new URL('index.yaml', base), {
    what: 'the repository index (index.yaml)',
    maxBytes: policy.maxBytes,
    headers: { accept: 'application/x-yaml, application/yaml, text/yaml, */*' },
  });
  if (index.status !== 200) throw statusError(index, 'the repository index (index.yaml)', { repository: spec.repository });
  const entry = await findChartVersionOffThread(index.bytes, spec.chart, spec.version);
  const expected = indexDigest(entry.digest);
  const url = URL.parse(entry.urls[0] ?? '', base.href);
  if (!url) throw new SourceError('invalid_source', `the repository's index gives an invalid URL for ${spec.chart} ${spec.version}`);
  const chart = await http.get(url, { what: `the chart ${spec.chart} ${spec.version}`, maxBytes: policy.maxBytes });
  if (chart.status !== 200)
    throw statusError(chart, `the chart ${spec.chart} ${spec.version}`, { chart: spec.chart, version: spec.version });
  const digest = expected ? assertDigest(chart.bytes, expected, `the chart ${spec.chart} ${spec.version}`) : sha256Digest(chart.bytes);
  assertGzip(chart.bytes, `the chart ${spec.chart} ${spec.version}`);
  return {
    kind: 'helm-chart',
    digest,
    bytes: chart.bytes,
    pinned: { helm: { repository: spec.repository, chart: spec.chart, version: spec.version, digest } },
  };
}

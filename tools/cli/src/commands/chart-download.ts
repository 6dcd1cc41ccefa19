import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { CliError } from '../errors.ts';

interface IndexEntry {
  version?: unknown;
  urls?: unknown;
  digest?: unknown;
}

async function get(url: string, what: string): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  } catch (err) {
    throw new CliError(`${what} (${url}): ${(err as Error).message}`);
  }
  if (!res.ok) throw new CliError(`${what} (${url}): HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/**
 * The chart's .tgz from a classic chart repository, as the hub fetches it at submit (its index's
 * entry, the first URL, checked against the index's digest): what `apply --chart --sign` signs the
 * digest of. OCI registries are not read here yet.
 */
export async function downloadChart(helm: { repository: string; chart: string; version: string }): Promise<Buffer> {
  if (!/^https?:\/\//.test(helm.repository))
    throw new CliError('--sign with --chart reads classic chart repositories (http:// or https://) only, not OCI registries yet');
  const base = helm.repository.endsWith('/') ? helm.repository : `${helm.repository}/`;
  const index = parse((await get(new URL('index.yaml', base).toString(), 'the chart repository index')).toString('utf8')) as {
    entries?: Record<string, IndexEntry[]>;
  };
  const entry = index.entries?.[helm.chart]?.find((e) => String(e.version) === helm.version);
  const url = Array.isArray(entry?.urls) && typeof entry.urls[0] === 'string' ? entry.urls[0] : undefined;
  if (!url) throw new CliError(`chart ${helm.chart} ${helm.version} is not in ${helm.repository}`);
  const tgz = await get(new URL(url, base).toString(), `chart ${helm.chart} ${helm.version}`);
  const digest = createHash('sha256').update(tgz).digest('hex');
  if (typeof entry?.digest === 'string' && entry.digest.replace(/^sha256:/, '') !== digest)
    throw new CliError(`chart ${helm.chart} ${helm.version} does not match the digest its repository index gives`);
  return tgz;
}

import { parseDocument, visit, type Document } from 'yaml';
import { SourceError } from '../errors.ts';
import { sliceChartEntries } from './index-slice.ts';

/** One version of a chart, as the repository's index lists it. */
export interface ChartEntry {
  version: string;
  urls: string[];
  /** sha256 of the .tgz in hex, when the index gives one (`helm repo index` always does). */
  digest?: string;
}

/** An index in another layout is parsed whole, which only a small one may cost. */
export const FULL_PARSE_MAX_BYTES = 1024 * 1024;
/** One chart's versions: a thousand of them fit (a real chart's entry is 1-2 KB a version). */
export const SLICE_MAX_CHARS = 2 * 1024 * 1024;
const LISTED_VERSIONS = 20;

const invalidIndex = (reason: string) =>
  new SourceError('invalid_source', `the repository's index.yaml is not usable: ${reason}`, { reason });

/**
 * Parses hostile YAML: the failsafe schema (every scalar a string, so `version: 1.10` stays
 * "1.10" and no tag builds anything), duplicate keys not searched for (quadratic in yaml),
 * and no alias at all (index writers never emit one; refusing them ends alias bombs).
 */
function parseIndexYaml(text: string): Document {
  let doc: Document;
  try {
    doc = parseDocument(text, { schema: 'failsafe', uniqueKeys: false, prettyErrors: false });
  } catch (err) {
    // The composer recurses per nesting level: absurd nesting ends in a RangeError.
    throw invalidIndex(err instanceof Error ? err.message : String(err));
  }
  const error = doc.errors[0];
  if (error) throw invalidIndex(error.message);
  let aliases = false;
  visit(doc, {
    Alias() {
      aliases = true;
      return visit.BREAK;
    },
  });
  if (aliases) throw invalidIndex('it uses YAML aliases');
  return doc;
}

/** The chart's list of versions from the index, parsing as little of it as its layout allows. */
function chartVersions(index: Buffer, chart: string): unknown {
  const text = index.toString('utf8');
  const slice = sliceChartEntries(text, chart);
  if (slice.kind === 'absent') return undefined;
  if (slice.kind === 'slice') {
    if (slice.text.length > SLICE_MAX_CHARS) throw invalidIndex(`the entries of ${chart} exceed ${SLICE_MAX_CHARS} characters`);
    return parseIndexYaml(slice.text).toJS({ maxAliasCount: 0 })?.[chart];
  }
  if (index.length > FULL_PARSE_MAX_BYTES) {
    throw invalidIndex(`it is not in the block layout chart repositories write, and larger than ${FULL_PARSE_MAX_BYTES} bytes`);
  }
  const doc = parseIndexYaml(text);
  return doc.getIn(['entries', chart], false) === undefined
    ? undefined
    : (doc.toJS({ maxAliasCount: 0 }) as { entries?: Record<string, unknown> })?.entries?.[chart];
}

function asEntry(value: unknown): ChartEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { version, urls, digest } = value as Record<string, unknown>;
  if (typeof version !== 'string') return undefined;
  const list = Array.isArray(urls) ? urls.filter((u): u is string => typeof u === 'string' && u !== '') : [];
  return { version, urls: list, ...(typeof digest === 'string' && digest !== '' ? { digest } : {}) };
}

/** The entry for chart@version, or source_not_found naming what the repository has. */
export function findChartVersion(index: Buffer, chart: string, version: string): ChartEntry {
  const listed = chartVersions(index, chart);
  if (listed === undefined || listed === null) {
    throw new SourceError('source_not_found', `the repository has no chart named ${chart}`, { chart });
  }
  if (!Array.isArray(listed)) throw invalidIndex(`the entries of ${chart} are not a list`);
  const entries = listed.map(asEntry).filter((e): e is ChartEntry => e !== undefined);
  const entry = entries.find((e) => e.version === version);
  if (!entry) {
    const available = entries.slice(0, LISTED_VERSIONS).map((e) => e.version);
    throw new SourceError('source_not_found', `the repository has no version ${version} of ${chart}`, { chart, version, available });
  }
  if (entry.urls.length === 0) throw invalidIndex(`${chart} ${version} lists no download URL`);
  return entry;
}

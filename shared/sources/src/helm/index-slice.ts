/**
 * A chart repository's index.yaml lists every version of every chart; big public repositories
 * serve many megabytes of it. Composing all of it with the `yaml` package costs about a second
 * and 50 MB of heap per megabyte, on the api's event loop. Only one chart's entries are needed,
 * so they are cut out of the text first and only that slice is parsed.
 *
 * The cut relies on the layout every index writer produces (`helm repo index`, chart-releaser,
 * ChartMuseum: block style), which is checked as it goes:
 *
 *     entries:                 <- a top-level key, alone on its line
 *       demo:                  <- the chart's key, at the entries' indentation N
 *       - version: 0.1.0       <- its list, at N ("- ") or deeper
 *         urls: [...]
 *       other:                 <- the next key at N ends the slice (so does anything at < N)
 *
 * Lines inside block scalars are always indented deeper than N, so they never end the slice
 * early or start one.
 */

/** The chart's slice dedented to column 0; `absent` when the index is in this layout without the chart. */
export type SliceResult = { kind: 'slice'; text: string } | { kind: 'absent' } | { kind: 'unrecognised' };

interface Line {
  text: string;
  indent: number;
  /** Blank or a comment: neither starts nor ends a block. */
  filler: boolean;
}

function* lines(text: string, from: number): Generator<Line> {
  let start = from;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const stop = end < 0 ? text.length : end;
    const line = text.slice(start, stop).replace(/\r$/, '');
    const indent = line.length - line.trimStart().length;
    const rest = line.slice(indent);
    yield { text: line, indent, filler: rest === '' || rest.startsWith('#') };
    start = stop + 1;
  }
}

const ENTRIES_KEY = /^entries:[ \t]*(#.*)?$/m;

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A line of the block without the block's indentation ('' for a shallower blank or comment line). */
function dedent(line: Line, depth: number): string {
  return line.indent >= depth ? line.text.slice(depth) : '';
}

/** Whether `line` ends a chart's block whose key sits at `depth`: anything shallower, or the next key. */
function endsBlock(line: Line, depth: number): boolean {
  return line.indent < depth || (line.indent === depth && !line.text.startsWith('-', depth));
}

/** Collects the chart's block (dedented) from the lines after `entries:`; empty when it has none. */
function collect(after: Iterable<Line>, key: RegExp): string[] {
  let depth: number | undefined;
  const taken: string[] = [];
  for (const line of after) {
    if (line.filler) {
      if (taken.length > 0) taken.push(dedent(line, depth ?? 0));
      continue;
    }
    depth ??= line.indent;
    // `entries:` with nothing under it (depth 0), or the next top-level key: the entries end here.
    if (line.indent === 0 || (taken.length > 0 && endsBlock(line, depth))) break;
    if (taken.length > 0 || (line.indent === depth && key.test(line.text.slice(depth)))) taken.push(line.text.slice(depth));
  }
  return taken;
}

export function sliceChartEntries(text: string, chart: string): SliceResult {
  const match = ENTRIES_KEY.exec(text);
  if (!match) return { kind: 'unrecognised' };
  const key = new RegExp(`^(["']?)${escapeRegExp(chart)}\\1:[ \\t]*(#.*)?$`);
  const taken = collect(lines(text, match.index + match[0].length + 1), key);
  return taken.length > 0 ? { kind: 'slice', text: taken.join('\n') } : { kind: 'absent' };
}

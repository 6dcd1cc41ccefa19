/**
 * RFC 3339 timestamps from the kubelet carry up to 9 fractional digits with trailing zeros
 * trimmed, so they do not sort as strings. `sortableTs` pads the fraction to 9 digits (UTC `Z`
 * only, which is what the kubelet writes) so two of them compare with `<`.
 */
export function sortableTs(ts: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(ts);
  if (!m) return ts;
  return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}Z`;
}

/** "2026-11-24T06:00:00.123456789Z the line" → [ts, line]; a line without a timestamp gets none. */
export function splitTimestamp(raw: string): { ts: string | undefined; line: string } {
  const space = raw.indexOf(' ');
  const head = space === -1 ? raw : raw.slice(0, space);
  if (/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(head)) return { ts: head, line: space === -1 ? '' : raw.slice(space + 1) };
  return { ts: undefined, line: raw };
}

interface OperationLike {
  summary?: string;
  tags?: string[];
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A dependency-free reference page built from the OpenAPI document (no CDN, no bundled UI):
 * every operation with its summary, and a link to the machine-readable document.
 */
export function renderDocsPage(document: object): string {
  const paths = (document as { paths?: Record<string, Record<string, OperationLike>> }).paths ?? {};
  const rows: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      rows.push(
        `<tr><td class="m ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</td><td><code>${escapeHtml(path)}</code></td>` +
          `<td>${escapeHtml((op.tags ?? []).join(', '))}</td><td>${escapeHtml(op.summary ?? '')}</td></tr>`,
      );
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Brokkr API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}
.m{font-weight:bold}.get{color:#2a7}.post{color:#27a}.put{color:#a72}.patch{color:#a7a}.delete{color:#c33}</style></head>
<body><h1>Brokkr API v1</h1>
<p>Authenticate with <code>Authorization: Bearer &lt;PAK&gt;</code>. Errors are JSON <code>{"code","message","details"?}</code>.
The full OpenAPI 3.1 document: <a href="/docs/openapi.json">/docs/openapi.json</a>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>Tags</th><th>Summary</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></body></html>`;
}

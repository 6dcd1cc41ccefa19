import { time } from '../lib/format.js';
import { html, useMemo, useState } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Loaded, Pager } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';

const LIMIT = 100;
const LIVE = prefixes('stack.');

/** The stacks this PAK may see (GET /api/v1/stacks: admin all, generator its own). */
export function StacksPage() {
  const result = useApi('stacks', { live: LIVE });
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const filtered = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const all = [...(result.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));
    return needle ? all.filter((s) => s.name.toLowerCase().includes(needle)) : all;
  }, [result.data, q]);

  return html`
    <h1>Stacks</h1>
    <${Loaded} result=${result}>
      ${() => html`
        <div class="toolbar">
          <label
            >Search<input
              type="search"
              value=${q}
              onInput=${(e) => {
                setQ(e.target.value);
                setOffset(0);
              }}
          /></label>
        </div>
        <table data-testid="stacks-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Description</th>
              <th>Generator</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            ${filtered.slice(offset, offset + LIMIT).map(
              (s) =>
                html`<tr key=${s.id}>
                  <td><a href=${link('stacks', s.id)}>${s.name}</a></td>
                  <td>${s.description ?? ''}</td>
                  <td class="mono">${s.generator_id.slice(0, 8)}</td>
                  <td>${time(s.created_at)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} offset=${offset} limit=${LIMIT} total=${filtered.length} onChange=${setOffset} />
      `}
    <//>
  `;
}

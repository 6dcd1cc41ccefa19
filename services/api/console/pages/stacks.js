import { withQuery } from '../lib/api.js';
import { time } from '../lib/format.js';
import { html, useState } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Loaded, Pager } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';

const LIMIT = 100;
const LIVE = prefixes('stack.', 'deployment.created', 'deployment.deleted');

/** The stacks this PAK may see (admin all, generator its own), 100 a page, from /ui/api/stacks. */
export function StacksPage() {
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const result = useApi(withQuery('/ui/api/stacks', { q, limit: LIMIT, offset }), { live: LIVE });

  return html`
    <h1>Stacks</h1>
    <div class="toolbar">
      <label
        >Search by name<input
          type="search"
          value=${q}
          data-testid="stacks-search"
          onInput=${(e) => {
            setQ(e.target.value);
            setOffset(0);
          }}
      /></label>
    </div>
    <${Loaded} result=${result}>
      ${(page) => html`
        <table data-testid="stacks-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Description</th>
              <th class="num">Objects</th>
              <th class="num">Latest sequence</th>
              <th>Generator</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            ${page.stacks.map(
              (s) =>
                html`<tr key=${s.id}>
                  <td><a href=${link('stacks', s.id)}>${s.name}</a></td>
                  <td>${s.description ?? ''}</td>
                  <td class="num">${s.object_count}</td>
                  <td class="num">${s.latest_sequence ?? '—'}</td>
                  <td class="mono">${s.generator_id.slice(0, 8)}</td>
                  <td>${time(s.created_at)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} offset=${offset} limit=${LIMIT} total=${page.total} onChange=${setOffset} />
      `}
    <//>
  `;
}

import { withQuery } from '../lib/api.js';
import { time } from '../lib/format.js';
import { html, useMemo, useState } from '../lib/html.js';
import { Loaded, Pager } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';

const LIMIT = 100;
const AUDIT_REREAD_MS = [1500, 5000];
const ACTOR_TYPES = ['', 'admin', 'agent', 'generator', 'system'];
const RESOURCE_TYPES = ['', 'agent', 'stack', 'generator', 'template', 'webhook_subscription', 'work_order', 'pak', 'config', 'system'];
const EMPTY = { actor_type: '', actor_id: '', action: '', resource_type: '', resource_id: '', from: '', to: '' };

/** datetime-local has no zone: read it as local time, send RFC 3339. */
const iso = (local) => (local ? new Date(local).toISOString() : '');

/** GET /admin/audit-logs (admin only) with its filters; `action` takes a prefix like `agent.*`. */
export function AuditPage() {
  const [draft, setDraft] = useState(EMPTY);
  const [filters, setFilters] = useState(EMPTY);
  const [offset, setOffset] = useState(0);
  // New entries only matter on the first page; further pages would shift under the reader.
  const live = useMemo(() => (kind) => kind === 'audit' && offset === 0, [offset]);
  const path = withQuery('admin/audit-logs', { ...filters, from: iso(filters.from), to: iso(filters.to), limit: LIMIT, offset });
  // The hint comes from the stream the audit-writer stores from, in batches (1 s by default): read
  // once it has probably flushed, and once more in case it was slow.
  const result = useApi(path, { live, rereadAfterMs: AUDIT_REREAD_MS });

  const field = (name, label, options) =>
    html`<label
      >${label}${
        options
          ? html`<select value=${draft[name]} onChange=${(e) => setDraft({ ...draft, [name]: e.target.value })}>
              ${options.map((o) => html`<option value=${o}>${o || 'any'}</option>`)}
            </select>`
          : html`<input
              name=${name}
              type=${name === 'from' || name === 'to' ? 'datetime-local' : 'text'}
              value=${draft[name]}
              onInput=${(e) => setDraft({ ...draft, [name]: e.target.value })}
            />`
      }</label
    >`;

  return html`
    <h1>Audit log</h1>
    <form
      class="toolbar"
      data-testid="audit-filters"
      onSubmit=${(e) => {
        e.preventDefault();
        setFilters(draft);
        setOffset(0);
      }}
    >
      ${field('actor_type', 'Actor type', ACTOR_TYPES)} ${field('actor_id', 'Actor id')} ${field('action', 'Action (e.g. agent.*)')}
      ${field('resource_type', 'Resource type', RESOURCE_TYPES)} ${field('resource_id', 'Resource id')} ${field('from', 'From')}
      ${field('to', 'To')}
      <button class="primary" type="submit">Filter</button>
      <button
        type="button"
        onClick=${() => {
          setDraft(EMPTY);
          setFilters(EMPTY);
          setOffset(0);
        }}
      >
        Clear
      </button>
    </form>
    <${Loaded} result=${result}>
      ${(page) => html`
        <table data-testid="audit-table">
          <thead>
            <tr>
              <th>When</th>
              <th>Actor</th>
              <th>Action</th>
              <th>Resource</th>
              <th>Details</th>
              <th>Client</th>
            </tr>
          </thead>
          <tbody>
            ${page.logs.map(
              (l) =>
                html`<tr key=${l.id}>
                  <td>${time(l.timestamp)}</td>
                  <td>${l.actor_type}${l.actor_id ? html` <span class="mono">${l.actor_id.slice(0, 8)}</span>` : ''}</td>
                  <td class="mono">${l.action}</td>
                  <td>${l.resource_type}${l.resource_id ? html` <span class="mono">${l.resource_id.slice(0, 8)}</span>` : ''}</td>
                  <td class="mono">${l.details ? JSON.stringify(l.details) : ''}</td>
                  <td>${l.ip_address ?? ''}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} offset=${offset} limit=${LIMIT} total=${page.total} onChange=${setOffset} />
      `}
    <//>
  `;
}

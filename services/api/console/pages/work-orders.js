import { ago, short, time } from '../lib/format.js';
import { html } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Badge, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

const LIVE = prefixes('workorder.');

/** The active queue (GET /work-orders) and the latest finished orders (GET /work-order-log); admin only. */
export function WorkOrdersPage() {
  const active = useApi('work-orders', { live: LIVE });
  const log = useApi('work-order-log?limit=50', { live: LIVE });
  const now = useNow(5000);
  return html`
    <h1>Work orders</h1>
    <h2>Active</h2>
    <${Loaded} result=${active}>
      ${(list) =>
        list.length === 0
          ? html`<p class="muted" data-testid="no-work-orders">No active work orders.</p>`
          : html`<table data-testid="work-orders-table">
              <thead>
                <tr>
                  <th>Id</th>
                  <th>Type</th>
                  <th>Status</th>
                  <th>Claimed by</th>
                  <th class="num">Retries</th>
                  <th>Created</th>
                  <th>Last error</th>
                </tr>
              </thead>
              <tbody>
                ${list.map(
                  (w) =>
                    html`<tr key=${w.id}>
                      <td class="mono">${short(w.id)}</td>
                      <td>${w.work_type}</td>
                      <td><${Badge} value=${w.status} /></td>
                      <td>${w.claimed_by ? html`<a class="mono" href=${link('agents', w.claimed_by)}>${short(w.claimed_by)}</a>` : '—'}</td>
                      <td class="num">${w.retry_count}/${w.max_retries}</td>
                      <td title=${w.created_at}>${ago(w.created_at, now)}</td>
                      <td>${w.last_error ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`}
    <//>
    <h2>Finished (latest 50)</h2>
    <${Loaded} result=${log}>
      ${(list) =>
        list.length === 0
          ? html`<p class="muted">Nothing finished yet.</p>`
          : html`<table data-testid="work-order-log">
              <thead>
                <tr>
                  <th>Id</th>
                  <th>Type</th>
                  <th>Outcome</th>
                  <th>Agent</th>
                  <th>Completed</th>
                  <th>Message</th>
                </tr>
              </thead>
              <tbody>
                ${list.map(
                  (w) =>
                    html`<tr key=${w.id}>
                      <td class="mono">${short(w.id)}</td>
                      <td>${w.work_type}</td>
                      <td><${Badge} value=${w.success ? 'success' : 'failed'} /></td>
                      <td class="mono">${short(w.claimed_by)}</td>
                      <td>${time(w.completed_at)}</td>
                      <td>${w.result_message ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`}
    <//>
  `;
}

import { post, withQuery } from '../lib/api.js';
import { ago, short, time } from '../lib/format.js';
import { html, useState } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Badge, Failure, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

const LIVE = prefixes('audit');
const STATUSES = ['', 'pending', 'acquired', 'success', 'failed', 'dead'];
const LIMIT = 50;

/** Subscriptions (GET /webhooks, admin only) and, for the selected one, its deliveries. */
export function WebhooksPage({ id }) {
  const subs = useApi('webhooks', { live: LIVE });
  return html`
    <h1>Webhooks</h1>
    <${Loaded} result=${subs}>
      ${(list) => html`
        <table data-testid="webhooks-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Events</th>
              <th>Enabled</th>
              <th>Retries</th>
              <th>Timeout</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            ${list.map(
              (s) =>
                html`<tr key=${s.id} class=${s.id === id ? 'selected' : ''}>
                  <td><a href=${link('webhooks', s.id)}>${s.name}</a></td>
                  <td>${s.event_types.join(', ')}</td>
                  <td><${Badge} value=${s.enabled ? 'enabled' : 'disabled'} /></td>
                  <td class="num">${s.max_retries}</td>
                  <td class="num">${s.timeout_seconds} s</td>
                  <td>${time(s.created_at)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${list.length === 0 && html`<p class="muted">No subscriptions.</p>`}
      `}
    <//>
    ${id && html`<${Deliveries} key=${id} subscriptionId=${id} />`}
  `;
}

/** Deliveries change in the dispatcher, which announces nothing: re-read every few seconds. */
function Deliveries({ subscriptionId }) {
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const [outcome, setOutcome] = useState(null);
  const result = useApi(withQuery(`webhooks/${subscriptionId}/deliveries`, { status, limit: LIMIT, offset }), { everyMs: 5000 });
  const now = useNow(5000);

  async function redeliver(delivery) {
    try {
      await post(`webhook-deliveries/${delivery.id}/redeliver`);
      setOutcome({ ok: true, text: `Delivery ${short(delivery.id)} queued again.` });
      result.reload();
    } catch (error) {
      setOutcome({ ok: false, error });
    }
  }

  return html`
    <h2>Deliveries</h2>
    <div class="toolbar">
      <label
        >Status<select
          value=${status}
          onChange=${(e) => {
            setStatus(e.target.value);
            setOffset(0);
          }}
        >
          ${STATUSES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}
        </select></label
      >
      <button disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - LIMIT))}>← Newer</button>
      <button disabled=${(result.data?.length ?? 0) < LIMIT} onClick=${() => setOffset(offset + LIMIT)}>Older →</button>
    </div>
    ${outcome && (outcome.ok ? html`<p class="ok" data-testid="redeliver-outcome">${outcome.text}</p>` : html`<${Failure} error=${outcome.error} />`)}
    <${Loaded} result=${result}>
      ${(list) =>
        html`<table data-testid="deliveries-table">
            <thead>
              <tr>
                <th>Created</th>
                <th>Event</th>
                <th>Status</th>
                <th class="num">Attempts</th>
                <th>Last error</th>
                <th>Next retry</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${list.map(
                (d) =>
                  html`<tr key=${d.id} data-delivery=${d.id}>
                    <td title=${d.created_at}>${ago(d.created_at, now)}</td>
                    <td>${d.event_type}</td>
                    <td><${Badge} value=${d.status} /></td>
                    <td class="num">${d.attempts}</td>
                    <td>${d.last_error ?? ''}</td>
                    <td>${d.next_retry_at ? time(d.next_retry_at) : '—'}</td>
                    <td>
                      ${d.status === 'dead' || d.status === 'success' ? html`<button onClick=${() => redeliver(d)} data-testid="redeliver">Redeliver</button>` : ''}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${list.length === 0 && html`<p class="muted">No deliveries${status ? ` with status ${status}` : ''}.</p>`}`}
    <//>
  `;
}

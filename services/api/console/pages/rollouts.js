import { withQuery } from '../lib/api.js';
import { ago, short } from '../lib/format.js';
import { html, useState } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Badge, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

const STATUSES = ['', 'pending', 'progressing', 'paused', 'succeeded', 'promoted', 'failed', 'rolled_back', 'aborted', 'superseded'];
const LIVE = prefixes('rollout.', 'deployment.');

/** One wave's applied share as a compact label, e.g. "canary 2/2". */
const waveLabel = (w) =>
  html`<span class="wave-chip ${w.failed ? 'bad' : w.released ? '' : 'muted'}"
    >${w.name} ${w.applied}/${w.agents}${w.failed ? ` (${w.failed} failed)` : ''}</span
  >`;

/** Rollouts across the fleet (GET /rollouts: an admin every stack's, a generator its own), newest first, by status. */
export function RolloutsPage() {
  const [status, setStatus] = useState('');
  const result = useApi(withQuery('rollouts', { status, limit: 200 }), { live: LIVE });
  const now = useNow(5000);
  return html`
    <h1>Rollouts</h1>
    <div class="toolbar">
      <label
        >Status<select data-testid="rollouts-status" value=${status} onChange=${(e) => setStatus(e.target.value)}>
          ${STATUSES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}
        </select></label
      >
    </div>
    <${Loaded} result=${result}>
      ${(rollouts) =>
        rollouts.length === 0
          ? html`<p class="muted">
              No rollouts${status ? ` with status ${status}` : ''}. A stack with a rollout policy starts one for each new deployment object.
            </p>`
          : html`<table data-testid="rollouts-table">
              <thead>
                <tr>
                  <th>Stack</th>
                  <th>Status</th>
                  <th>Wave</th>
                  <th>Progress per wave</th>
                  <th>Started</th>
                  <th>Rollout</th>
                </tr>
              </thead>
              <tbody>
                ${rollouts.map(
                  (r) =>
                    html`<tr key=${r.id} data-rollout=${r.id}>
                      <td><a href=${link('stacks', r.stack_id)}>${r.stack_name}</a></td>
                      <td><${Badge} value=${r.status} /></td>
                      <td class="num">${Math.max(0, r.released_wave + 1)}/${r.waves.length}</td>
                      <td>${r.waves.map(waveLabel)}</td>
                      <td title=${r.created_at}>${ago(r.created_at, now)}</td>
                      <td><a class="mono" href=${link('rollouts', r.id)}>${short(r.id)}</a></td>
                    </tr>`,
                )}
              </tbody>
            </table>`}
    <//>
  `;
}

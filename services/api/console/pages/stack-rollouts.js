import { ago, short, time } from '../lib/format.js';
import { html, useMemo } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Badge, Failure, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';
import { RolloutDetail, Timeline } from './rollout.js';

/** "in 1 h 59 min" / "2 min ago" for an instant. */
function relative(iso, now) {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  if (s <= 0) return `${ago(iso, now)}`;
  if (s < 120) return `in ${s} s`;
  if (s < 7200) return `in ${Math.round(s / 60)} min`;
  return `in ${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** The stack's expiry (GET /stacks/{id}/expiry) as a fact: when maintenance deletes it. */
export function Expiry({ stackId }) {
  const live = useMemo(
    () => (kind, e) => kind === 'event' && e.data?.stack_id === stackId && String(e.event_type).startsWith('stack.'),
    [stackId],
  );
  const result = useApi(`stacks/${stackId}/expiry`, { live });
  const now = useNow(1000);
  if (result.error) return html`<span class="muted">—</span>`;
  if (!result.data) return '…';
  const at = result.data.expires_at;
  if (!at) return html`<span data-testid="expiry">never</span>`;
  return html`<span data-testid="expiry" class="warn" title=${at}>expires ${relative(at, now)} (${time(at)})</span>`;
}

function PolicySummary({ stackId }) {
  const result = useApi(`stacks/${stackId}/rollout-policy`);
  if (result.error?.status === 404)
    return html`<p class="muted" data-testid="no-policy">No rollout policy: each new deployment object goes to every agent at once.</p>`;
  return html`<${Loaded} result=${result}>
    ${({ policy }) =>
      html`<table data-testid="policy">
          <thead>
            <tr>
              <th>Wave</th>
              <th>Agents</th>
              <th class="num">Max failures</th>
              <th class="num">Soak</th>
              <th class="num">Deadline</th>
            </tr>
          </thead>
          <tbody>
            ${policy.waves.map(
              (w, i) =>
                html`<tr key=${w.name}>
                  <td>${i + 1}. ${w.name}</td>
                  <td>${w.selector ? `labelled ${w.selector.labels.join(', ')}` : `${w.percent}% (cumulative)`}</td>
                  <td class="num">${w.max_failures}</td>
                  <td class="num">${w.soak_seconds} s</td>
                  <td class="num">${w.progress_deadline_seconds} s</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <p class="muted">
          Automatic rollback:${' '}
          ${policy.auto_rollback ? 'on — a failed gate serves every agent the previous object again' : 'off — a failed gate stops the rollout'}.
        </p>`}
  <//>`;
}

function PreviewList({ stackId }) {
  const live = useMemo(
    () => (kind, e) => kind === 'event' && e.data?.stack_id === stackId && String(e.event_type).startsWith('preview.'),
    [stackId],
  );
  const result = useApi(`stacks/${stackId}/previews`, { live });
  const now = useNow(5000);
  return html`<${Loaded} result=${result}>
    ${(previews) =>
      previews.length === 0
        ? html`<p class="muted">No previews. <code>brokkr diff -f dir/</code> proposes one.</p>`
        : html`<table data-testid="previews">
            <thead>
              <tr>
                <th>Preview</th>
                <th>Status</th>
                <th class="num">Agents</th>
                <th class="num">Clean</th>
                <th class="num">Changes</th>
                <th class="num">Errors</th>
                <th>By</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              ${previews.slice(0, 10).map(
                (p) =>
                  html`<tr key=${p.id}>
                    <td><a class="mono" href=${link('previews', p.id)}>${short(p.id)}</a></td>
                    <td><${Badge} value=${p.status} /></td>
                    <td class="num">${p.counts.agents}</td>
                    <td class="num">${p.counts.clean}</td>
                    <td class="num ${p.counts.changes ? 'warn' : ''}">${p.counts.changes}</td>
                    <td class="num ${p.counts.error ? 'bad' : ''}">${p.counts.error}</td>
                    <td>${p.created_by ?? ''}</td>
                    <td>${ago(p.created_at, now)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`}
  <//>`;
}

/**
 * The progressive side of a stack: its rollout policy, the newest rollout live (waves, actions,
 * events) and the ones before it, its previews, and its recent event timeline (`stack.expiring`
 * among them).
 */
export function StackRollouts({ stackId }) {
  const live = useMemo(() => (kind, e) => kind === 'event' && e.data?.stack_id === stackId, [stackId]);
  const rollouts = useApi(`stacks/${stackId}/rollouts?limit=10`, { live });
  const events = useApi(`/ui/api/stacks/${stackId}/events`, { live });
  const now = useNow(5000);
  return html`
    <h2>Rollout policy</h2>
    <${PolicySummary} stackId=${stackId} />
    <h2>Rollouts</h2>
    ${rollouts.error && html`<${Failure} error=${rollouts.error} />`}
    ${rollouts.data?.length === 0 && html`<p class="muted">No rollouts yet.</p>`}
    ${rollouts.data?.length > 0 && html`<${RolloutDetail} key=${rollouts.data[0].id} id=${rollouts.data[0].id} stackId=${stackId} />`}
    ${
      rollouts.data?.length > 1 &&
      html`<h3>Earlier rollouts</h3>
        <ul data-testid="earlier-rollouts">
          ${rollouts.data.slice(1).map(
            (r) =>
              html`<li key=${r.id}>
                <a class="mono" href=${link('rollouts', r.id)}>${short(r.id)}</a> <${Badge} value=${r.status} />
                <span class="muted">${ago(r.created_at, now)}${r.message ? ` — ${r.message}` : ''}</span>
              </li>`,
          )}
        </ul>`
    }
    <h2>Previews</h2>
    <${PreviewList} stackId=${stackId} />
    <h2>Timeline</h2>
    <${Loaded} result=${events}>${({ events: list }) => html`<${Timeline} events=${list} now=${now} />`}<//>
  `;
}

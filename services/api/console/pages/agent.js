import { ago, short, time } from '../lib/format.js';
import { html, useMemo } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Badge, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

const EVENTS_SHOWN = 50;

/** One agent: its record, the stacks it is associated with, and its latest events (all from /api/v1). */
export function AgentPage({ id }) {
  const liveForAgent = useMemo(() => (kind, e) => kind === 'event' && e.data?.agent_id === id, [id]);
  const agent = useApi(`agents/${id}`, { everyMs: 15_000 });
  const stacks = useApi(`agents/${id}/stacks`, { live: liveForAgent });
  const events = useApi(`agents/${id}/events`, { live: liveForAgent });
  const labels = useApi(`agents/${id}/labels`);
  const now = useNow();

  return html`
    <p><a href=${link('fleet')}>← Fleet</a></p>
    <${Loaded} result=${agent}>
      ${(a) => html`
        <h1>Agent ${a.name} <span class="muted">on ${a.cluster_name}</span></h1>
        <dl class="facts" data-testid="agent-facts">
          <dt>Id</dt>
          <dd class="mono">${a.id}</dd>
          <dt>Status</dt>
          <dd><${Badge} value=${a.status} /></dd>
          <dt>Last heartbeat</dt>
          <dd>${ago(a.last_heartbeat, now)} <span class="muted">${time(a.last_heartbeat)}</span></dd>
          <dt>Kubernetes</dt>
          <dd>
            ${a.k8s_reachable === null ? 'not reported' : a.k8s_reachable ? `reachable (${a.k8s_api_latency_ms ?? '?'} ms)` : 'unreachable'}
            <span class="muted"> reported ${ago(a.k8s_reported_at, now)}</span>
          </dd>
          <dt>Labels</dt>
          <dd><${Loaded} result=${labels}>${(ls) => (ls.length ? ls.map((l) => l.label).join(', ') : '—')}<//></dd>
        </dl>
      `}
    <//>
    <div class="split">
      <section>
        <h2>Stacks</h2>
        <${Loaded} result=${stacks}>
          ${(list) =>
            list.length === 0
              ? html`<p class="muted">No associated stacks.</p>`
              : html`<table>
                  <thead>
                    <tr>
                      <th>Stack</th>
                      <th>Description</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${list.map(
                      (s) =>
                        html`<tr key=${s.id}>
                          <td><a href=${link('stacks', s.id)}>${s.name}</a></td>
                          <td>${s.description ?? ''}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`}
        <//>
      </section>
      <section>
        <h2>Latest events</h2>
        <${Loaded} result=${events}>
          ${(list) =>
            list.length === 0
              ? html`<p class="muted">No events.</p>`
              : html`<table data-testid="agent-events">
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>Object</th>
                      <th>Type</th>
                      <th>Status</th>
                      <th>Message</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${list.slice(0, EVENTS_SHOWN).map(
                      (e) =>
                        html`<tr key=${e.id}>
                          <td title=${e.created_at}>${ago(e.created_at, now)}</td>
                          <td>
                            <a class="mono" href=${link('deployment-objects', e.deployment_object_id)}>${short(e.deployment_object_id)}</a>
                          </td>
                          <td>${e.event_type}</td>
                          <td><${Badge} value=${e.status} /></td>
                          <td>${e.message ?? ''}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`}
        <//>
      </section>
    </div>
  `;
}

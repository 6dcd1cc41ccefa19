import { ago, short, time } from '../lib/format.js';
import { html, useMemo } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Badge, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

/** What the agent's latest event says: applied, failed, or nothing yet. */
function stateOf(agent) {
  if (!agent.last_event) return 'pending';
  return String(agent.last_event.status).toUpperCase() === 'SUCCESS' ? 'applied' : 'failed';
}

/**
 * One deployment object: sequence, checksum, YAML, and per agent its latest event and health
 * (from /ui/api/deployment-objects/{id}/agents). Re-read when an event names this object.
 */
export function DeploymentObjectPage({ id }) {
  const live = useMemo(() => (kind, e) => kind === 'event' && e.data?.deployment_object_id === id, [id]);
  // Health reports announce no event: re-read them on a timer.
  const result = useApi(`/ui/api/deployment-objects/${id}/agents`, { live, everyMs: 15_000 });
  const now = useNow(5000);

  return html`
    <${Loaded} result=${result}>
      ${({ deployment_object: o, agents, total, recent_events }) => html`
        <p><a href=${link('stacks', o.stack_id)}>← Stack</a></p>
        <h1>Deployment object <span class="mono">${short(o.id)}</span></h1>
        <dl class="facts" data-testid="object-facts">
          <dt>Id</dt>
          <dd class="mono">${o.id}</dd>
          <dt>Sequence</dt>
          <dd data-testid="sequence">${o.sequence_id}</dd>
          <dt>Checksum</dt>
          <dd class="mono" data-testid="checksum">${o.yaml_checksum}</dd>
          <dt>Submitted</dt>
          <dd>${time(o.submitted_at)}</dd>
          <dt>Deletion marker</dt>
          <dd>${o.is_deletion_marker ? 'yes' : 'no'}</dd>
        </dl>
        <h2>Agents (${total})</h2>
        ${
          agents.length === 0
            ? html`<p class="muted">No agent is associated with this object's stack.</p>`
            : html` <table data-testid="object-agents">
                <thead>
                  <tr>
                    <th>Agent</th>
                    <th>Cluster</th>
                    <th>State</th>
                    <th>Last event</th>
                    <th>Health</th>
                  </tr>
                </thead>
                <tbody>
                  ${agents.map(
                    (a) =>
                      html`<tr key=${a.agent_id} data-agent=${a.agent_id}>
                        <td>
                          <a href=${link('agents', a.agent_id)}>${a.name}</a
                          >${a.associated ? '' : html` <span class="muted">(no longer targeted)</span>`}
                        </td>
                        <td>${a.cluster_name}</td>
                        <td data-testid="agent-state"><${Badge} value=${stateOf(a)} /></td>
                        <td>
                          ${a.last_event ? html`${a.last_event.event_type} ${a.last_event.message ?? ''} <span class="muted">${ago(a.last_event.created_at, now)}</span>` : '—'}
                        </td>
                        <td>
                          ${a.health ? html`<${Badge} value=${a.health.status} /> <span class="muted">${ago(a.health.checked_at, now)}</span>` : html`<span class="muted">no report</span>`}
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
        <h2>YAML</h2>
        <pre class="yaml" data-testid="yaml">${o.yaml_content}</pre>
        <h2>Latest events</h2>
        ${
          recent_events.length === 0
            ? html`<p class="muted">No events yet.</p>`
            : html` <table>
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Agent</th>
                    <th>Type</th>
                    <th>Status</th>
                    <th>Message</th>
                  </tr>
                </thead>
                <tbody>
                  ${recent_events.map(
                    (e) =>
                      html`<tr key=${e.id}>
                        <td title=${e.created_at}>${ago(e.created_at, now)}</td>
                        <td><a class="mono" href=${link('agents', e.agent_id)}>${short(e.agent_id)}</a></td>
                        <td>${e.event_type}</td>
                        <td><${Badge} value=${e.status} /></td>
                        <td>${e.message ?? ''}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      `}
    <//>
  `;
}

import { withQuery } from '../lib/api.js';
import { ago } from '../lib/format.js';
import { html, useState } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Badge, Card, HealthCounts, Loaded, Pager } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

const LIMIT = 100;
const LIVE = prefixes('agent.', 'deployment.');
// Heartbeats and health reports announce no event: re-read on a slow timer for those.
const REREAD_MS = 15_000;

/**
 * The fleet: counts over every agent this PAK may see, then one page of agents. Reads
 * /ui/api/fleet (paged, with health counts); when the telemetry work adds GET /api/v1/fleet this
 * page can read that instead.
 */
export function FleetPage() {
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const result = useApi(withQuery('/ui/api/fleet', { q, limit: LIMIT, offset }), { live: LIVE, everyMs: REREAD_MS });
  const now = useNow();

  return html`
    <h1>Fleet</h1>
    <${Loaded} result=${result}>
      ${(fleet) => html`
        <div class="cards" data-testid="fleet-summary">
          <${Card} n=${fleet.summary.total} label="agents" />
          <${Card} n=${fleet.summary.active} label="active" tone="ok" />
          <${Card} n=${fleet.summary.inactive} label="inactive" />
          <${Card} n=${fleet.summary.k8s_unreachable} label="Kubernetes unreachable" tone=${fleet.summary.k8s_unreachable ? 'bad' : ''} />
          <${Card} n=${fleet.summary.never_seen} label="never sent a heartbeat" />
          <${Card} n=${fleet.summary.health.healthy} label="healthy objects" tone="ok" />
          <${Card} n=${fleet.summary.health.degraded} label="degraded" tone=${fleet.summary.health.degraded ? 'warn' : ''} />
          <${Card} n=${fleet.summary.health.failing} label="failing" tone=${fleet.summary.health.failing ? 'bad' : ''} />
        </div>
        <div class="toolbar">
          <label
            >Search name or cluster
            <input
              type="search"
              value=${q}
              data-testid="fleet-search"
              onInput=${(e) => {
                setQ(e.target.value);
                setOffset(0);
              }}
            />
          </label>
        </div>
        <table data-testid="fleet-table">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Cluster</th>
              <th>Status</th>
              <th>Heartbeat</th>
              <th>Kubernetes</th>
              <th>Health (objects)</th>
            </tr>
          </thead>
          <tbody>
            ${fleet.agents.map(
              (a) =>
                html`<tr key=${a.id} data-agent=${a.id}>
                  <td><a href=${link('agents', a.id)}>${a.name}</a></td>
                  <td>${a.cluster_name}</td>
                  <td><${Badge} value=${a.status} /></td>
                  <td title=${a.last_heartbeat ?? ''}>${ago(a.last_heartbeat, now)}</td>
                  <td>
                    ${
                      a.k8s_reachable === null
                        ? html`<span class="muted">not reported</span>`
                        : a.k8s_reachable
                          ? html`<span class="ok">reachable</span>${a.k8s_api_latency_ms != null ? ` (${a.k8s_api_latency_ms} ms)` : ''}`
                          : html`<span class="bad">unreachable</span>`
                    }
                  </td>
                  <td><${HealthCounts} health=${a.health} /></td>
                </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} offset=${offset} limit=${LIMIT} total=${fleet.total} onChange=${setOffset} />
      `}
    <//>
  `;
}

import { withQuery } from '../lib/api.js';
import { html, useMemo, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Loaded } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';
import { driftLive, GroupLine } from './drift-view.js';

/** How dark a heatmap cell is: its open records, in four steps. */
const heat = (n) => (n === 0 ? 0 : n === 1 ? 1 : n <= 5 ? 2 : n <= 20 ? 3 : 4);

/** Rows (stacks) and columns (agents) of the cells, most drifted first, with their names from the other two groupings. */
function grid(cells, stacks, agents) {
  const name = (groups) => new Map(groups.map((g) => [g.key, g.label ?? g.key]));
  const stackNames = name(stacks);
  const agentNames = name(agents);
  const count = new Map(cells.map((c) => [`${c.stack_id}/${c.agent_id}`, c.records]));
  const rows = stacks.map((s) => ({ id: s.key, name: stackNames.get(s.key) }));
  const columns = agents.map((a) => ({ id: a.key, name: agentNames.get(a.key) }));
  return { rows, columns, at: (s, a) => count.get(`${s}/${a}`) ?? 0 };
}

/** Stacks × clusters: a cell per pair with open drift, darker with more records; a click opens the stack. */
function Heatmap({ cells, stacks, agents }) {
  const { rows, columns, at } = grid(cells, stacks, agents);
  if (rows.length === 0) return html`<p class="muted" data-testid="no-open-drift">No open drift anywhere.</p>`;
  return html`<div class="heatmap-wrap">
    <table class="heatmap" data-testid="heatmap">
      <thead>
        <tr>
          <th>Stack \\ cluster</th>
          ${columns.map((c) => html`<th key=${c.id} class="col" title=${c.name}><a href=${link('agents', c.id)}>${c.name}</a></th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr key=${r.id}>
              <th><a href=${link('stacks', r.id)}>${r.name}</a></th>
              ${columns.map((c) => {
                const n = at(r.id, c.id);
                return html`<td
                  key=${c.id}
                  class="cell heat-${heat(n)}"
                  data-testid="heat-cell"
                  data-stack=${r.id}
                  data-agent=${c.id}
                  data-records=${n}
                  title=${`${r.name} on ${c.name}: ${n} open drift record(s)`}
                >
                  ${n ? html`<a href=${link('stacks', r.id)}>${n}</a>` : ''}
                </td>`;
              })}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

const BY = ['field', 'manager', 'kind'];

/**
 * Drift across the fleet: a heatmap of open drift records, stacks × clusters (the most drifted
 * 100 of each), and the open drift grouped by field, manager or kind ("on N of M clusters").
 */
export function DriftPage() {
  const [by, setBy] = useState('field');
  const live = useMemo(() => driftLive(undefined), []);
  const q = (b, limit) => withQuery('drift/groups', { by: b, state: 'open', limit });
  const cells = useApi(q('stack_agent', 1000), { live });
  const stacks = useApi(q('stack', 100), { live });
  const agents = useApi(q('agent', 100), { live });
  const groups = useApi(q(by, 50), { live });
  return html`
    <h1>Drift</h1>
    <p class="muted">
      Open drift: changes made in the clusters behind Brokkr's back that were not corrected (report mode) or could not be.
    </p>
    <${Loaded} result=${cells}>
      ${(c) =>
        html`<${Loaded} result=${stacks}>
          ${(s) => html`<${Loaded} result=${agents}>${(a) => html`<${Heatmap} cells=${c.groups} stacks=${s.groups} agents=${a.groups} />`}<//>`}
        <//>`}
    <//>
    <h2>Grouped</h2>
    <div class="toolbar">
      <label
        >By<select data-testid="drift-by" value=${by} onChange=${(e) => setBy(e.target.value)}>
          ${BY.map((b) => html`<option value=${b}>${b}</option>`)}
        </select></label
      >
    </div>
    <${Loaded} result=${groups}>
      ${(g) =>
        html`<p data-testid="drift-totals">${g.records} open record(s) on ${g.agents} of ${g.agents_total} cluster(s).</p>
          <ul class="drift-groups">
            ${g.groups.map((x) => html`<${GroupLine} key=${x.key} group=${x} total=${g.agents_total} by=${by} />`)}
          </ul>`}
    <//>
  `;
}

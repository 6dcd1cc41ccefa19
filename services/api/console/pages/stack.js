import { withQuery } from '../lib/api.js';
import { ago, short } from '../lib/format.js';
import { html, useMemo, useRef, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Badge, HealthCounts, Loaded, Pager } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';
import { StackDrift } from './drift-view.js';
import { StackOrder } from './stack-order.js';
import { Expiry, StackRollouts } from './stack-rollouts.js';

const LIMIT = 50;

/** A stack and one page of its deployment objects (newest first) with how many agents applied each. */
export function StackPage({ id }) {
  const [offset, setOffset] = useState(0);
  const live = useMemo(() => (kind, e) => kind === 'event' && (e.data?.stack_id === id || e.event_type?.startsWith('agent.')), [id]);
  const result = useApi(withQuery(`/ui/api/stacks/${id}/deployment-objects`, { limit: LIMIT, offset }), { live, everyMs: 30_000 });
  const labels = useApi(`stacks/${id}/labels`);
  const now = useNow(5000);
  // The newest object is on the first page only: later pages keep the one seen there.
  const newest = useRef(undefined);
  if (result.data?.offset === 0) newest.current = result.data.objects.find((o) => !o.is_deletion_marker)?.id;

  return html`
    <p><a href=${link('stacks')}>← Stacks</a></p>
    <${Loaded} result=${result}>
      ${({ stack, objects, total }) => html`
        <h1>Stack ${stack.name}</h1>
        <dl class="facts">
          <dt>Id</dt>
          <dd class="mono">${stack.id}</dd>
          <dt>Description</dt>
          <dd>${stack.description ?? '—'}</dd>
          <dt>Generator</dt>
          <dd class="mono">${stack.generator_id}</dd>
          <dt>Labels</dt>
          <dd><${Loaded} result=${labels}>${(ls) => (ls.length ? ls.map((l) => l.label).join(', ') : '—')}<//></dd>
          <dt>Expiry</dt>
          <dd><${Expiry} stackId=${stack.id} /></dd>
        </dl>
        <${StackOrder} stackId=${stack.id} newestObjectId=${newest.current} />
        <${StackRollouts} stackId=${stack.id} />
        <${StackDrift} stackId=${stack.id} />
        <h2>Deployment objects (${total})</h2>
        <table data-testid="objects-table">
          <thead>
            <tr>
              <th class="num">Sequence</th>
              <th>Object</th>
              <th>Checksum</th>
              <th>Submitted</th>
              <th>Applied</th>
              <th>Failed</th>
              <th>Health</th>
            </tr>
          </thead>
          <tbody>
            ${objects.map(
              (o) =>
                html`<tr key=${o.id} data-object=${o.id}>
                  <td class="num">${o.sequence_id}</td>
                  <td>
                    <a class="mono" href=${link('deployment-objects', o.id)}>${short(o.id)}</a>
                    ${o.is_deletion_marker ? html`<${Badge} value="deletion marker" />` : ''}
                  </td>
                  <td class="mono" title=${o.yaml_checksum}>${o.yaml_checksum.slice(0, 12)}</td>
                  <td title=${o.submitted_at}>${ago(o.submitted_at, now)}</td>
                  <td class="num ${o.applied_agents ? 'ok' : ''}" data-testid="applied-count">${o.applied_agents}</td>
                  <td class="num ${o.failed_agents ? 'bad' : ''}">${o.failed_agents}</td>
                  <td><${HealthCounts} health=${o.health} /></td>
                </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} offset=${offset} limit=${LIMIT} total=${total} onChange=${setOffset} />
      `}
    <//>
  `;
}

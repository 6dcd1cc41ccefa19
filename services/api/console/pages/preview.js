import { short, time } from '../lib/format.js';
import { html, useMemo } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Badge, Card, Loaded } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';

const SIGN = { created: '+', changed: '~', pruned: '-', unchanged: '=' };
const objectLabel = (o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

function ObjectRow({ o }) {
  if (o.error)
    return html`<li class="bad" data-action="error">
      <code>!</code> ${objectLabel(o)}: <span data-testid="object-error">${o.error}</span>
    </li>`;
  return html`<li data-action=${o.action}>
    <code>${SIGN[o.action] ?? '?'}</code> ${objectLabel(o)}
    <${Badge} value=${o.action} />${o.note ? html` <span class="muted">(${o.note})</span>` : ''}
    ${
      o.diff.length > 0 &&
      html`<table class="diff" data-testid="diff">
        <tbody>
          ${o.diff.map(
            (d) =>
              html`<tr key=${d.path}>
                <td class="mono">${d.path}</td>
                <td class="mono bad">${d.before ?? '∅'}</td>
                <td>→</td>
                <td class="mono ok">${d.after ?? '∅'}</td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${o.diff_truncated ? html`<div class="muted">… more fields changed</div>` : ''}
  </li>`;
}

/** Per action, how many of the agent's objects: "1 created, 1 changed". */
function countsOf(agent) {
  const counts = {};
  for (const o of agent.objects) {
    const k = o.error ? 'error' : (o.action ?? 'error');
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return ['created', 'changed', 'pruned', 'unchanged', 'error']
    .filter((k) => counts[k])
    .map((k) => `${counts[k]} ${k}`)
    .join(', ');
}

/**
 * A fleet-wide diff preview (GET /previews/{id}), read like `brokkr diff`: per agent its verdict,
 * then every object that would be created, changed (with the changed fields) or pruned, and every
 * error; unchanged objects are counted. Re-read while agents are still answering.
 */
export function PreviewPage({ id }) {
  const live = useMemo(() => (kind, e) => kind === 'event' && e.data?.preview_id === id, [id]);
  const result = useApi(`previews/${id}`, { live, everyMs: 3000 });
  return html`<${Loaded} result=${result}>
    ${(p) => html`
      <p><a href=${link('stacks', p.stack_id)}>← Stack</a></p>
      <h1>Preview <span class="mono">${short(p.id)}</span> <${Badge} value=${p.status} /></h1>
      <p class="muted">
        Proposed by ${p.created_by ?? '—'} at ${time(p.created_at)}; nothing was published and no cluster
        changed.${p.is_deletion_marker ? ' A deletion: everything is pruned.' : ''}
      </p>
      <div class="cards" data-testid="preview-counts">
        <${Card} n=${p.counts.agents} label="agents asked" />
        <${Card} n=${p.counts.clean} label="clean" tone="ok" />
        <${Card} n=${p.counts.changes} label="with changes" tone="warn" />
        <${Card} n=${p.counts.error} label="with errors" tone=${p.counts.error ? 'bad' : ''} />
        <${Card} n=${p.counts.pending + p.counts.expired} label="not answered" />
      </div>
      ${p.agents.map(
        (a) =>
          html`<section class="preview-agent" key=${a.agent_id} data-testid="preview-agent" data-agent=${a.agent_id}>
            <h2>
              <a href=${link('agents', a.agent_id)}>${a.agent_name ?? short(a.agent_id)}</a>${' '}<span class="muted"
                >cluster ${a.cluster_name ?? '?'}</span
              >
              <${Badge} value=${a.status} />
            </h2>
            <p class="muted">${countsOf(a) || (a.status === 'pending' ? 'waiting for its dry run…' : 'nothing to report')}</p>
            ${a.error && html`<p class="bad">! ${a.error}</p>`}
            <ul class="objects">
              ${a.objects.filter((o) => o.action !== 'unchanged' || o.error).map((o) => html`<${ObjectRow} key=${`${o.kind}/${o.namespace}/${o.name}`} o=${o} />`)}
            </ul>
          </section>`,
      )}
    `}
  <//>`;
}

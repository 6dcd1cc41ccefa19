import { html, useState } from '../lib/html.js';
import { Failure, Loaded } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';

/** Re-read when the stack gets a new object or a render fails (a layer change wakes no event: reload shows it). */
const rendersLive = (stackId) => (kind, e) => kind === 'event' && e.data?.stack_id === stackId;

const selectorText = (s) =>
  [
    ...(s.agent_ids?.length ? [`${s.agent_ids.length} agent(s)`] : []),
    ...(s.labels ?? []).map((l) => `label ${l}`),
    ...Object.entries(s.annotations ?? {}).map(([k, v]) => `${k}=${v}`),
  ].join(', ') || 'every agent';

/** The stack's override layers, in the order they apply. */
function Layers({ stackId }) {
  const result = useApi(`stacks/${stackId}/overrides`, { live: rendersLive(stackId) });
  return html`<${Loaded} result=${result}>
    ${(layers) =>
      layers.length
        ? html`<table data-testid="layers-table">
            <thead>
              <tr>
                <th>Layer</th>
                <th class="num">Priority</th>
                <th>Selects</th>
                <th>Values</th>
                <th class="num">Patches</th>
              </tr>
            </thead>
            <tbody>
              ${layers.map(
                (l) =>
                  html`<tr key=${l.id} data-layer=${l.name}>
                    <td>${l.name}</td>
                    <td class="num">${l.priority}</td>
                    <td>${selectorText(l.selector)}</td>
                    <td class="mono">${l.values ? JSON.stringify(l.values) : '—'}</td>
                    <td class="num">${l.patches?.length ?? 0}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p class="muted" data-testid="layers-table">
            No override layers: every agent gets the same YAML (unless its source is a chart rendered with its cluster's facts).
          </p>`}
  <//>`;
}

const sourceText = (source) => {
  if (!source) return 'its own YAML';
  if (source.helm)
    return `chart ${source.helm.chart} ${source.helm.version} from ${source.helm.repository} (${String(source.helm.digest).slice(0, 19)}…)`;
  if (source.kustomize) return `kustomize overlay ${source.kustomize.path} (${String(source.kustomize.digest).slice(0, 19)}…)`;
  return JSON.stringify(source);
};

/** One agent's render: what it is served, from what, and which layer set each field. */
function AgentRender({ stackId, agentId }) {
  const result = useApi(`stacks/${stackId}/agents/${agentId}/render`, { live: rendersLive(stackId) });
  return html`<${Loaded} result=${result}>
    ${(e) =>
      html`<div data-testid="agent-render">
        <dl class="facts">
          <dt>Source</dt>
          <dd>${sourceText(e.inputs.source)}</dd>
          <dt>Layers</dt>
          <dd>${e.inputs.layers.map((l) => `${l.name} (${l.priority})`).join(', ') || '—'}</dd>
          ${
            e.inputs.capabilities
              ? html`<dt>Kubernetes</dt>
                  <dd>${e.inputs.capabilities.kubeVersion}</dd>`
              : ''
          }
          ${
            e.error
              ? html`<dt>Render failed</dt>
                  <dd class="bad">${e.error}</dd>`
              : ''
          }
        </dl>
        ${
          e.fields.length
            ? html`<table data-testid="field-origins">
                <thead>
                  <tr>
                    <th>Where</th>
                    <th>Field</th>
                    <th>Layer</th>
                    <th>By</th>
                  </tr>
                </thead>
                <tbody>
                  ${e.fields.map(
                    (f, i) =>
                      html`<tr key=${i}>
                        <td>${f.in === 'values' ? 'values' : f.target}</td>
                        <td class="mono">${f.path}</td>
                        <td>${f.layer}</td>
                        <td>${f.by ?? 'values'}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : ''
        }
        ${
          e.yaml_content === null
            ? html`<p class="bad">This agent is served nothing of the stack.</p>`
            : html`<pre class="yaml" data-testid="render-yaml">${e.yaml_content}</pre>`
        }
      </div>`}
  <//>`;
}

/**
 * Layers, and an agent's rendered view of the stack's newest object. `agents`: the agents targeting
 * the stack, read once by the stack page (stack-order.js) for this view and the per-agent status.
 */
export function StackRenders({ stackId, newestObjectId, agents, agentsError }) {
  const [agentId, setAgentId] = useState('');
  return html`<section data-testid="stack-renders">
    <h2>Per-cluster content</h2>
    <${Layers} stackId=${stackId} />
    ${
      newestObjectId
        ? html`<label
            >Rendered for
            <select data-testid="render-agent" value=${agentId} onChange=${(ev) => setAgentId(ev.target.value)}>
              <option value="">choose an agent…</option>
              ${agents.map((a) => html`<option value=${a.agent_id}>${a.name}</option>`)}
            </select></label
          >`
        : ''
    }
    ${agentsError ? html`<${Failure} error=${agentsError} />` : ''}
    ${agentId ? html`<${AgentRender} stackId=${stackId} agentId=${agentId} />` : ''}
  </section>`;
}

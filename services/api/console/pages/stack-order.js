import { html, useMemo, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { session } from '../lib/session.js';
import { Badge, Failure, Loaded, Pager } from '../lib/ui.js';
import { useApi } from '../lib/use-api.js';
import { StackDependencies, useStackNames } from './stack-dependencies.js';
import { StackRenders } from './stack-renders.js';

/**
 * Why a stack is or is not on each agent it targets: one line per agent from
 * GET /stacks/{id}/agents/{agent_id}/status (docs/dependencies.md, "The status answer").
 *
 * Bounded on purpose: the agents come from the one read the page already makes for the newest
 * object (/ui/api/deployment-objects/{id}/agents, at most 500 rows, shared with the per-cluster
 * view), and statuses are read only for the AGENTS_PER_PAGE agents on screen — a stack on 300
 * agents costs 10 status reads per page and per refresh, never 300. For an admin, the stack's
 * health (one read) adds every agent waiting on a dependency, on screen or not.
 */
const AGENTS_PER_PAGE = 10;
/** Health reports announce no event: statuses on screen are re-read this often as well as on hints. */
const STATUS_EVERY_MS = 10_000;

const waveText = (n) => `wave ${n + 1}`;

/** The status answer in one line, e.g. "waiting: stack db not healthy on this agent". */
export function statusLine(s, nameOf) {
  if (s.state === 'served') return 'served';
  if (s.state === 'not_targeted') return 'not targeted: the stack does not reach this agent';
  if (s.state === 'no_object') return 'nothing to serve: the stack has no deployment object';
  if (s.reason === 'dependency') {
    const where = s.scope === 'fleet' ? 'on every agent it targets' : 'on this agent';
    const more = s.waiting_on.length > 1 ? ` (and ${s.waiting_on.length - 1} more)` : '';
    return `waiting: stack ${nameOf(s.stack_id)} not ${s.ready_when} ${where}${more}`;
  }
  if (s.reason === 'approval') return `waiting: ${waveText(s.approval_wave)} needs approvals`;
  if (s.reason === 'window') {
    const opens = s.opens_at ? ` until ${new Date(s.opens_at).toISOString().replace('T', ' ').slice(0, 16)} UTC` : '';
    return `waiting: maintenance window ${s.window.name} (${s.window.type})${opens}`;
  }
  if (s.wave !== undefined && ['pending', 'progressing', 'paused'].includes(s.rollout_status))
    return `waiting: rollout has not released ${waveText(s.wave)}${s.rollout_status === 'paused' ? ' (paused)' : ''}`;
  return `waiting: rollout ${s.rollout_status} holds it on the previous object`;
}

function AgentWhy({ stackId, agent, live, nameOf }) {
  const result = useApi(`stacks/${stackId}/agents/${agent.agent_id}/status`, { live, everyMs: STATUS_EVERY_MS });
  const s = result.data;
  return html`<tr data-agent=${agent.agent_id} data-state=${s?.state ?? ''} data-reason=${s?.reason ?? ''}>
    <td><a href=${link('agents', agent.agent_id)}>${agent.name}</a> <span class="muted">(${agent.cluster_name})</span></td>
    <td>${s ? html`<${Badge} value=${s.state} />` : ''}</td>
    <td data-testid="agent-why">
      ${result.error ? html`<${Failure} error=${result.error} />` : s ? statusLine(s, nameOf) : '…'}
      ${s?.rollout_id ? html` <a href=${link('rollouts', s.rollout_id)}>rollout</a>` : ''}
    </td>
  </tr>`;
}

/** Admin only (GET /stacks/{id}/health is): the agents waiting on a dependency, in one read. */
function WaitingSummary({ stackId, agents, nameOf }) {
  const health = useApi(session.identity?.admin ? `stacks/${stackId}/health` : null, { everyMs: STATUS_EVERY_MS });
  const waiting = health.data?.waiting_agents;
  if (!waiting?.length) return '';
  const agentName = (id) => agents.find((a) => a.agent_id === id)?.name ?? id.slice(0, 8);
  return html`<p class="warn" data-testid="waiting-summary">
    ${waiting.length} agent(s) wait on a dependency:
    ${waiting.map((w, i) => html`${i ? '; ' : ' '}${agentName(w.agent_id)} (stack ${nameOf(w.stack_id)} not ${w.ready_when})`)}
  </p>`;
}

function AgentsWhy({ stackId, agents, deps, nameOf }) {
  const [offset, setOffset] = useState(0);
  const [round, setRound] = useState(0);
  const dependsOn = useMemo(() => new Set((deps ?? []).map((d) => d.stack_id)), [deps]);
  // Events about this stack (its rollout, its agents' reports) or a stack it waits for can change a line.
  const live = useMemo(
    () => (kind, e) => kind === 'event' && (e.data?.stack_id === stackId || dependsOn.has(e.data?.stack_id)),
    [stackId, dependsOn],
  );
  const page = agents.slice(offset, offset + AGENTS_PER_PAGE);
  return html`<section data-testid="agents-why">
    <h2>On each agent, and why not</h2>
    <${WaitingSummary} stackId=${stackId} agents=${agents} nameOf=${nameOf} />
    ${
      agents.length === 0
        ? html`<p class="muted">No agent targets this stack.</p>`
        : html`<table>
              <thead>
                <tr>
                  <th>Agent</th>
                  <th>State</th>
                  <th>Why <button data-testid="agents-why-refresh" onClick=${() => setRound((r) => r + 1)}>Refresh</button></th>
                </tr>
              </thead>
              <tbody>
                ${page.map((a) => html`<${AgentWhy} key=${`${a.agent_id}:${round}`} stackId=${stackId} agent=${a} live=${live} nameOf=${nameOf} />`)}
              </tbody>
            </table>
            <${Pager} offset=${offset} limit=${AGENTS_PER_PAGE} total=${agents.length} onChange=${setOffset} />`
    }
  </section>`;
}

/**
 * Order and per-cluster content of a stack: its dependencies, why it is (not) on each agent, its
 * override layers and renders. One read of the newest object's agents serves the last two.
 */
export function StackOrder({ stackId, newestObjectId }) {
  const deps = useApi(`stacks/${stackId}/dependencies`);
  const agents = useApi(newestObjectId ? `/ui/api/deployment-objects/${newestObjectId}/agents` : null);
  const nameOf = useStackNames(
    NO_NAMES,
    (deps.data ?? []).map((d) => d.stack_id),
  );
  const targeted = useMemo(() => (agents.data?.agents ?? []).filter((a) => a.associated), [agents.data]);
  return html`
    <${StackDependencies} stackId=${stackId} deps=${deps} nameOf=${nameOf} />
    ${
      newestObjectId
        ? html`<${Loaded} result=${agents}>
            ${() => html`<${AgentsWhy} stackId=${stackId} agents=${targeted} deps=${deps.data} nameOf=${nameOf} />`}
          <//>`
        : html`<p class="muted" data-testid="agents-why">No deployment object yet: no agent is served anything of this stack.</p>`
    }
    <${StackRenders} stackId=${stackId} newestObjectId=${newestObjectId} agents=${targeted} agentsError=${agents.error} />
  `;
}

const NO_NAMES = {};

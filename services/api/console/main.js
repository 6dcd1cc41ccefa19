import { onUnauthorized, post } from './lib/api.js';
import { html, render, useEffect, useState } from './lib/html.js';
import { liveStatus, onLiveStatus, startLive, stopLive } from './lib/live.js';
import { link, useRoute } from './lib/router.js';
import { session } from './lib/session.js';
import { AgentPage } from './pages/agent.js';
import { ApprovalRequestsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { DeploymentObjectPage } from './pages/deployment-object.js';
import { DriftPage } from './pages/drift.js';
import { FleetPage } from './pages/fleet.js';
import { PreviewPage } from './pages/preview.js';
import { RolloutPage } from './pages/rollout.js';
import { RolloutsPage } from './pages/rollouts.js';
import { SignIn } from './pages/sign-in.js';
import { StackPage } from './pages/stack.js';
import { StacksPage } from './pages/stacks.js';
import { TemplatePage, TemplatesPage } from './pages/templates.js';
import { WebhooksPage } from './pages/webhooks.js';
import { WorkOrdersPage } from './pages/work-orders.js';

const NAV = [
  ['fleet', 'Fleet'],
  ['stacks', 'Stacks'],
  ['rollouts', 'Rollouts'],
  ['approvals', 'Approvals'],
  ['drift', 'Drift'],
  ['templates', 'Templates'],
  ['webhooks', 'Webhooks'],
  ['audit', 'Audit log'],
  ['work-orders', 'Work orders'],
];

function page([section, id]) {
  switch (section) {
    case 'fleet':
      return html`<${FleetPage} />`;
    case 'agents':
      return html`<${AgentPage} key=${id} id=${id} />`;
    case 'stacks':
      return id ? html`<${StackPage} key=${id} id=${id} />` : html`<${StacksPage} />`;
    case 'rollouts':
      return id ? html`<${RolloutPage} key=${id} id=${id} />` : html`<${RolloutsPage} />`;
    case 'approvals':
      return html`<${ApprovalRequestsPage} />`;
    case 'drift':
      return html`<${DriftPage} />`;
    case 'previews':
      return html`<${PreviewPage} key=${id} id=${id} />`;
    case 'templates':
      return id ? html`<${TemplatePage} key=${id} id=${id} />` : html`<${TemplatesPage} />`;
    case 'deployment-objects':
      return html`<${DeploymentObjectPage} key=${id} id=${id} />`;
    case 'webhooks':
      return html`<${WebhooksPage} id=${id} />`;
    case 'audit':
      return html`<${AuditPage} />`;
    case 'work-orders':
      return html`<${WorkOrdersPage} />`;
    default:
      return html`<p>Unknown page. <a href=${link('fleet')}>Go to the fleet</a>.</p>`;
  }
}

function whoLabel(identity) {
  if (!identity || Object.keys(identity).length === 0) return '';
  if (identity.admin) return 'admin';
  if (identity.generator) return `generator ${identity.generator.slice(0, 8)}`;
  return `agent ${identity.agent?.slice(0, 8)}`;
}

function Shell({ identity, onSignOut }) {
  const route = useRoute();
  const [live, setLive] = useState(liveStatus());
  useEffect(() => onLiveStatus(setLive), []);
  return html`
    <header class="top">
      <span class="brand">Brokkr</span>
      <nav>
        ${NAV.map(([key, label]) => html`<a href=${link(key)} class=${route[0] === key ? 'active' : ''} data-nav=${key}>${label}</a>`)}
        <a href="/docs" target="_blank" rel="noopener">API docs</a>
      </nav>
      <span class="live ${live === 'live' ? 'on' : ''}" data-testid="live-status" title="Live updates">${live}</span>
      <span class="who" data-testid="who">${whoLabel(identity)}</span>
      <button onClick=${onSignOut} data-testid="sign-out">Sign out</button>
    </header>
    <main>${page(route)}</main>
  `;
}

function App() {
  // A reload keeps the tab's PAK: show the console at once and check the PAK alongside the first
  // reads (a rejected one signs out through onUnauthorized). null = signed out.
  const [identity, setIdentity] = useState(session.pak ? {} : null);

  const signOut = () => {
    stopLive();
    session.signOut();
    setIdentity(null);
  };

  useEffect(() => onUnauthorized(signOut), []);
  useEffect(() => {
    if (!session.pak || session.identity) return;
    post('auth/pak').then((who) => {
      session.identity = who;
      setIdentity(who);
    }, signOut);
  }, []);
  useEffect(() => {
    if (identity) startLive();
  }, [identity !== null]);

  if (identity === null) return html`<${SignIn} onSignedIn=${setIdentity} />`;
  return html`<${Shell} identity=${identity} onSignOut=${signOut} />`;
}

const root = document.getElementById('root');
// The static "Loading…" shell in index.html is only there for the first paint.
root.textContent = '';
render(html`<${App} />`, root);

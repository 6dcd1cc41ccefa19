/**
 * What a value or patch may say about the agent it is rendered for: `{{ agent.name }}`,
 * `{{ agent.cluster_name }}`, `{{ agent.id }}`, `{{ agent.annotations.<key> }}` (Brokkr's
 * annotations are the key/value pairs), `{{ agent.labels }}` (its plain tags, comma-separated),
 * `{{ agent.facts.<name> }}` (what it reports: kubernetes_version …). Strict: a reference the agent
 * cannot resolve is an error naming it, unless it has a default — `{{ agent.annotations.region |
 * default: "eu" }}`. Only string leaves are read; nothing else is evaluated.
 */
export interface AgentView {
  id: string;
  name: string;
  cluster_name: string;
  labels: string[];
  annotations: Record<string, string>;
  facts: Record<string, unknown>;
  /** A digest of `facts` (sql/agents.ts): agents with equal facts share their Capabilities in a plan. */
  facts_key?: string;
}

const REFERENCE = /\{\{\s*agent\.([A-Za-z0-9_.\-/]+)\s*(?:\|\s*default:\s*"((?:[^"\\]|\\.)*)"\s*)?\}\}/g;
/** Anything that looks like a reference but is not one of the forms above: refused, not passed through. */
const ANY_REFERENCE = /\{\{\s*agent\./;

export class UnresolvedReference extends Error {
  constructor(
    readonly reference: string,
    readonly why: string,
  ) {
    super(`{{ agent.${reference} }} ${why}`);
    this.name = 'UnresolvedReference';
  }
}

const WHAT_AN_AGENT_HAS = 'is not something an agent has (name, cluster_name, id, labels, annotations.<key>, facts.<name>)';

/** Whether a reference's path names something an agent can have (whether this agent has it is lookup's question). */
function readablePath(path: string): boolean {
  const [head, ...rest] = path.split('.');
  const keyed = rest.length > 0 && rest.join('.') !== '';
  if (head === 'name' || head === 'cluster_name' || head === 'id' || head === 'labels') return !keyed;
  return (head === 'annotations' || head === 'facts') && keyed;
}

const FIELDS: Record<string, (agent: AgentView) => string> = {
  name: (a) => a.name,
  cluster_name: (a) => a.cluster_name,
  id: (a) => a.id,
  labels: (a) => a.labels.join(','),
};

const factText = (fact: unknown) =>
  fact === undefined || fact === null ? undefined : typeof fact === 'string' ? fact : JSON.stringify(fact);

function lookup(agent: AgentView, path: string): string | undefined {
  if (!readablePath(path)) throw new UnresolvedReference(path, WHAT_AN_AGENT_HAS);
  const [head = '', ...rest] = path.split('.');
  const key = rest.join('.');
  // Own keys only: a key such as `__proto__` names nothing an agent has.
  if (head === 'annotations') return Object.hasOwn(agent.annotations, key) ? agent.annotations[key] : undefined;
  if (head === 'facts') return Object.hasOwn(agent.facts, key) ? factText(agent.facts[key]) : undefined;
  return FIELDS[head]!(agent);
}

function resolveString(text: string, agent: AgentView): string {
  // Checked on the text as written: a resolved value (an annotation, say) may itself look like a reference.
  if (ANY_REFERENCE.test(text.replace(REFERENCE, '')))
    throw new UnresolvedReference(text.slice(0, 80), 'is not a reference this hub reads');
  return text.replace(REFERENCE, (_match, path: string, fallback: string | undefined) => {
    const value = lookup(agent, path);
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback.replace(/\\(.)/g, '$1');
    throw new UnresolvedReference(path, `has no value for agent "${agent.name}" and no default`);
  });
}

/** The value with every agent reference in its strings resolved for this agent (a new value; the input is untouched). */
export function resolveAgentReferences<T>(value: T, agent: AgentView): T {
  if (typeof value === 'string') return resolveString(value, agent) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => resolveAgentReferences(item, agent)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveAgentReferences(v, agent)])) as T;
  }
  return value;
}

/** Whether anything in the value refers to the agent (then each agent may render differently). */
export function refersToAgent(value: unknown): boolean {
  return ANY_REFERENCE.test(JSON.stringify(value ?? null));
}

/**
 * The first reference in the value that no agent could ever resolve (a misspelt field, a form this
 * hub does not read), checked when a layer or an object is written, whatever agents it targets now.
 */
export function unreadableReference(value: unknown): string | undefined {
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  for (const text of strings) {
    if (ANY_REFERENCE.test(text.replace(REFERENCE, '')))
      return `${text.slice(0, 80)} is not a reference this hub reads ({{ agent.<field> }} or {{ agent.<field> | default: "…" }})`;
    for (const match of text.matchAll(REFERENCE)) if (!readablePath(match[1]!)) return `{{ agent.${match[1]} }} ${WHAT_AN_AGENT_HAS}`;
  }
  return undefined;
}

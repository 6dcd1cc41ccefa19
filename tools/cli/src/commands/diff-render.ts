import type { Preview, PreviewAgentResult, PreviewObjectResult } from '@brokkr/contracts';

export type { Preview };
type PreviewAgent = PreviewAgentResult;
type PreviewObject = PreviewObjectResult;

const SIGN: Record<string, string> = { created: '+', changed: '~', pruned: '-', unchanged: '=' };

export const agentLabel = (a: PreviewAgent) => `${a.agent_name ?? a.agent_id} (cluster ${a.cluster_name ?? '?'})`;

const objectLabel = (o: PreviewObject) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

/** One agent's verdict line: what it would do, counted by action. */
export function verdictLine(a: PreviewAgent): string {
  if (a.status === 'pending' || a.status === 'expired')
    return `${agentLabel(a)}: ${a.status === 'pending' ? 'waiting' : 'no answer (expired)'}`;
  const counts = new Map<string, number>();
  for (const o of a.objects)
    counts.set(o.error ? 'error' : (o.action ?? 'error'), (counts.get(o.error ? 'error' : (o.action ?? 'error')) ?? 0) + 1);
  const parts = ['created', 'changed', 'pruned', 'unchanged', 'error'].filter((k) => counts.has(k)).map((k) => `${counts.get(k)} ${k}`);
  return `${agentLabel(a)}: ${a.status}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function objectLines(o: PreviewObject): string[] {
  if (o.error) return [`  ! ${objectLabel(o)}: ${o.error.split('\n')[0]}`];
  const lines = [`  ${SIGN[o.action ?? ''] ?? '?'} ${objectLabel(o)}  ${o.action}${o.note ? ` (${o.note})` : ''}`];
  for (const d of o.diff) lines.push(`      ${d.path}: ${d.before ?? '∅'} → ${d.after ?? '∅'}`);
  if (o.diff_truncated) lines.push('      … more fields changed');
  return lines;
}

/** Per agent: its verdict, then every object that would change (and every error); unchanged objects are counted only. */
export function renderPreview(preview: Preview): string {
  const out: string[] = [];
  for (const a of preview.agents) {
    out.push(verdictLine(a));
    if (a.error) out.push(`  ! ${a.error}`);
    for (const o of a.objects) if (o.action !== 'unchanged' || o.error) out.push(...objectLines(o));
  }
  const c = preview.counts;
  out.push(
    `${c.agents} agent(s): ${c.clean} clean, ${c.changes} with changes, ${c.error} with errors${c.expired ? `, ${c.expired} expired` : ''}${c.pending ? `, ${c.pending} not answered` : ''}`,
  );
  return `${out.join('\n')}\n`;
}

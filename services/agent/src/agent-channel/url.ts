/** Brokkr's rule: `agent.ws_url` if set, else the broker URL with http(s)→ws(s) and `/internal/ws/agent`. */
export function agentChannelUrl(brokerUrl: string, override: string | undefined): string {
  if (override) return override;
  const base = brokerUrl.replace(/\/+$/, '');
  const ws = base.startsWith('https://') ? `wss://${base.slice(8)}` : base.startsWith('http://') ? `ws://${base.slice(7)}` : `ws://${base}`;
  return `${ws}/internal/ws/agent`;
}

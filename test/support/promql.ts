import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

/** Prefixes of the series Brokkr's processes export (prom-client's default metrics included). */
const METRIC = /\b((?:brokkr|process|nodejs)_[a-z0-9_]+)\b/g;
/** Any identifier used as a selector: `name{`, `name[`, or a bare name before an operator. */
const SELECTOR = /(?<![\w"$.])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{[]/g;
const HISTOGRAM_SUFFIX = /_(bucket|sum|count)$/;
const NOT_METRICS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/** Metric names an expression reads (string literals removed first: label values are not metrics). */
export function metricsIn(expr: string): { names: string[]; selectors: string[] } {
  const code = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const names = [...code.matchAll(METRIC)].map((m) => m[1]!);
  const selectors = [...code.matchAll(SELECTOR)].map((m) => m[1]!).filter((s) => !NOT_METRICS.has(s));
  return { names: [...new Set(names)], selectors: [...new Set(selectors)] };
}

/** The family a series name belongs to: `x_bucket` / `x_sum` / `x_count` of histogram `x`. */
export function familyOf(name: string, types: Map<string, string>): { family: string; type: string | undefined } {
  if (types.has(name)) return { family: name, type: types.get(name) };
  const base = name.replace(HISTOGRAM_SUFFIX, '');
  return { family: base, type: base !== name ? types.get(base) : undefined };
}

/** `# TYPE name kind` lines of a Prometheus text exposition: family name -> kind. */
export function metricTypes(exposition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1]!, m[2]!);
  return types;
}

/** Grafana's variables, given values a Prometheus rule file accepts. */
export function withoutGrafanaVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$service', '.*');
}

interface Panel {
  type: string;
  title: string;
  id: number;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid: string };
  targets?: { expr: string }[];
  panels?: Panel[];
}

export interface Dashboard {
  title: string;
  uid: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
}

export async function loadDashboard(file: string): Promise<Dashboard> {
  return JSON.parse(await readFile(file, 'utf8')) as Dashboard;
}

export function dashboardPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

export function dashboardExprs(dashboard: Dashboard): { panel: string; expr: string }[] {
  return dashboardPanels(dashboard).flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

export async function alertExprs(file: string): Promise<{ alert: string; expr: string }[]> {
  const doc = parse(await readFile(file, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ alert: r.alert, expr: r.expr })));
}

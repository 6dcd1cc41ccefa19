import fs from 'node:fs';
import path from 'node:path';
import { create } from 'tar';
import { parse } from 'yaml';
import { helmReleaseName, type ArchiveInputValues } from '@brokkr/trust';
import { CliError } from '../errors.ts';
import { downloadChart } from './chart-download.ts';
import { readSettingsIn, type StackSettings } from './manifests.ts';

/** A chart or an overlay for `apply`: the hub fetches (or unpacks) it and renders it for each agent. */
export interface SourceContent {
  body: { source: Record<string, unknown>; values?: Record<string, unknown> };
  defaultStackName: string;
  /** For progress lines: "chart demo 0.1.0 from …". */
  describe: string;
  settings: StackSettings;
  /**
   * For --sign: the inputs the hub will pin and the agents render (docs/signatures.md, "Charts and
   * overlays"); a chart is downloaded here as the hub downloads it, its digest the same.
   */
  inputs: (stackName: string) => Promise<Omit<ArchiveInputValues, 'renderer'>>;
}

export interface ChartOptions {
  chart: string;
  repo?: string;
  chartVersion?: string;
  values: string[];
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's merge of values files: maps merge key by key, anything else is replaced (the later file wins). */
function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(over))
    out[key] = isMapping(value) && isMapping(out[key]) ? mergeValues(out[key], value) : value;
  return out;
}

function readValues(files: readonly string[]): Record<string, unknown> {
  return files.reduce<Record<string, unknown>>((values, file) => {
    let doc: unknown;
    try {
      doc = parse(fs.readFileSync(file, 'utf8')) ?? {};
    } catch (err) {
      throw new CliError(`${file}: ${(err as Error).message.split('\n')[0]}`);
    }
    if (!isMapping(doc)) throw new CliError(`${file}: values must be a YAML mapping`);
    return mergeValues(values, doc);
  }, {});
}

/** `--chart demo --repo https://charts.example.com --version 1.2.3` (or `oci://registry/path`). */
export function chartContent(options: ChartOptions): SourceContent {
  if (!options.repo || !options.chartVersion)
    throw new CliError('--chart needs --repo <https://… or oci://…> and --chart-version <version>');
  const helm = { repository: options.repo, chart: options.chart, version: options.chartVersion };
  const values = readValues(options.values);
  return {
    body: { source: { helm }, values },
    inputs: async (stackName) => ({
      kind: 'helm',
      archive: await downloadChart(helm),
      values,
      options: { release: { name: helmReleaseName(stackName), namespace: 'default' } },
    }),
    defaultStackName: options.chart,
    describe: `chart ${options.chart} ${options.chartVersion} from ${options.repo}`,
    settings: {},
  };
}

/** Local paths a kustomization names (resources, bases, components, patches, generators' files): what the archive must hold. */
function referencedPaths(dir: string, seen: Set<string>): string[] {
  if (seen.has(dir)) return [];
  seen.add(dir);
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
  if (!file) return [];
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (isMapping(v)) Object.values(v).forEach(walk);
  };
  walk(parse(fs.readFileSync(file, 'utf8')));
  const local = strings.filter((s) => !s.includes('://') && !s.includes('\n')).map((s) => path.resolve(dir, s.replace(/^.*=/, '')));
  const existing = local.filter((p) => fs.existsSync(p));
  return [...existing, ...existing.filter((p) => fs.statSync(p).isDirectory()).flatMap((p) => referencedPaths(p, seen))];
}

function commonAncestor(paths: readonly string[]): string {
  return paths.reduce((common, p) => {
    let dir = common;
    while (path.relative(dir, p).startsWith('..')) dir = path.dirname(dir);
    return dir;
  });
}

const SKIPPED = new Set(['.git', 'node_modules']);

async function packTree(root: string): Promise<Buffer> {
  const top = fs.readdirSync(root).filter((name) => !SKIPPED.has(name));
  const chunks: Buffer[] = [];
  const filter = (p: string) => !p.split('/').some((part) => SKIPPED.has(part));
  for await (const chunk of create({ gzip: true, cwd: root, portable: true, noMtime: true, filter }, top)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `-k overlays/prod`: the overlay and everything it reaches (its bases, components, patches) packed
 * from their common directory (or `--kustomize-root`), sent inline; the hub builds it with
 * kustomize for each agent.
 */
export async function kustomizeContent(overlay: string, rootOption?: string): Promise<SourceContent> {
  const dir = path.resolve(overlay);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new CliError(`${overlay}: not a directory`);
  const root = rootOption ? path.resolve(rootOption) : commonAncestor([dir, ...referencedPaths(dir, new Set())]);
  const relative = path.relative(root, dir) || '.';
  if (relative.startsWith('..')) throw new CliError(`${overlay} is not inside --kustomize-root ${rootOption}`);
  const archive = await packTree(root);
  return {
    body: { source: { kustomize: { archive: archive.toString('base64'), path: relative } } },
    inputs: () => Promise.resolve({ kind: 'kustomize', archive, options: { path: relative } }),
    defaultStackName: root === dir ? path.basename(dir) : `${path.basename(root)}-${path.basename(dir)}`,
    describe: `kustomize overlay ${relative} (${Math.ceil(archive.length / 1024)} KiB packed from ${root})`,
    settings: readSettingsIn(dir),
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { packChart, type PackagedChart } from './charts.ts';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ChartRepositoryOptions {
  /** Where the repository lives on the server (default `/charts`). */
  basePath?: string;
  /** The address to listen on (default 127.0.0.1; any 127.x.y.z works on Linux). */
  host?: string;
  /** The index's download URLs: relative to the repository (default, as `helm repo index` writes) or absolute. */
  urls?: 'relative' | 'absolute';
  /**
   * The index's layout: `helm` (default) puts a chart's list items at its key's indentation, as
   * `helm repo index` does; `indented` nests them one level deeper, as other YAML writers do.
   */
  layout?: 'helm' | 'indented';
  /** Leave the charts' digests out of the index. */
  omitDigests?: boolean;
}

export interface ChartRepository {
  /** The repository URL a source names: `http://127.0.0.1:<port>/charts`. */
  url: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  charts: PackagedChart[];
  /** The index.yaml served (unless overridden). */
  index: string;
  /** The path of every request so far, in arrival order. */
  readonly requests: readonly string[];
  /** Serves `path` (from the server's root) with `handler` instead: a hostile index, a redirect, a huge body. */
  override(path: string, handler: RouteHandler): void;
  close(): Promise<void>;
}

function indexYaml(charts: readonly PackagedChart[], urlFor: (file: string) => string, options: ChartRepositoryOptions): string {
  const entries: Record<string, unknown[]> = {};
  for (const chart of charts) {
    const file = `${chart.name}-${chart.version}.tgz`;
    (entries[chart.name] ??= []).push({
      ...chart.metadata,
      created: '2026-01-01T00:00:00Z',
      ...(options.omitDigests ? {} : { digest: chart.digest.replace(/^sha256:/, '') }),
      urls: [urlFor(file)],
    });
  }
  return stringify({ apiVersion: 'v1', entries, generated: '2026-01-01T00:00:00Z' }, { indentSeq: options.layout === 'indented' });
}

/**
 * A classic Helm chart repository on 127.0.0.1: `<url>/index.yaml` and one `.tgz` per chart,
 * packaged from the given directories (or charts packaged already, e.g. other versions).
 */
export async function startChartRepository(
  charts: ReadonlyArray<string | PackagedChart>,
  options: ChartRepositoryOptions = {},
): Promise<ChartRepository> {
  const packaged = await Promise.all(charts.map((c) => (typeof c === 'string' ? packChart(c) : c)));
  const basePath = (options.basePath ?? '/charts').replace(/\/+$/, '');
  const host = options.host ?? '127.0.0.1';
  const overrides = new Map<string, RouteHandler>();
  const requests: string[] = [];
  const files = new Map(packaged.map((c) => [`${basePath}/${c.name}-${c.version}.tgz`, c.tgz]));
  const repo = { index: '' };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push(path);
    const override = overrides.get(path);
    if (override) return override(req, res);
    const body = path === `${basePath}/index.yaml` ? Buffer.from(repo.index) : files.get(path);
    if (!body) return void res.writeHead(404).end('not found');
    res.writeHead(200, {
      'content-type': path.endsWith('.tgz') ? 'application/gzip' : 'application/x-yaml',
      'content-length': body.length,
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  const url = `${origin}${basePath}`;
  repo.index = indexYaml(packaged, (file) => (options.urls === 'absolute' ? `${url}/${file}` : file), options);

  return {
    url,
    origin,
    charts: packaged,
    get index() {
      return repo.index;
    },
    requests,
    override: (path, handler) => void overrides.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

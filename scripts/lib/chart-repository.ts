/**
 * `npm start`'s chart repository: every chart under examples/charts, packaged and served as a
 * classic Helm chart repository (`index.yaml` and one `.tgz` per chart) on 127.0.0.1 — the same
 * server the tests fetch charts from (@brokkr/testkit's startChartRepository) — so that the
 * walkthrough of docs/renders.md has a chart to apply. The api may fetch from 127.0.0.1 only
 * because npm start allows that one address (BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';
import { startChartRepository, type ChartRepository } from '@brokkr/testkit';

/** The one address npm start's api may fetch charts and overlays from besides public ones. */
export const CHART_REPOSITORY_CIDR = '127.0.0.1/32';

export interface ExampleCharts {
  repository: ChartRepository;
  /** `examples/charts: hello 0.1.0, …` for the line npm start prints. */
  describe: string;
}

export async function startExampleCharts(): Promise<ExampleCharts> {
  const root = path.join(repoRoot, 'examples', 'charts');
  const entries = await fs.readdir(root, { withFileTypes: true });
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => path.join(root, e.name));
  const repository = await startChartRepository(dirs.sort());
  const charts = repository.charts.map((c) => `${c.name} ${c.version}`).join(', ');
  return { repository, describe: `examples/charts: ${charts}` };
}

/**
 * Console benchmark (`npm run bench:console`): how fast the operator console (/ui) paints with a
 * big fleet. The real api on PostgreSQL and NATS, seeded by SQL with BENCH_AGENTS agents (1,000)
 * and BENCH_OBJECTS deployment objects (5,000) over BENCH_STACKS stacks (50), the first stack
 * concerning every agent (console-seed.ts). Headless Chromium (Debian's package, through
 * playwright-core) opens each page BENCH_RUNS times (10, after one warm-up), every time in a fresh
 * browser context (empty cache, PAK already in sessionStorage, as after signing in), and reports:
 *   first paint / first contentful paint (the browser's paint timing entries), and
 *   data rendered: navigation start → the page's table has its first row (what an operator waits for),
 *   the slowest API call of the page (server time as the browser saw it) and bytes transferred.
 * Pages: fleet (first 100 of 1,000 agents with health counts), stacks (50), a stack's objects
 * (first 50 of 100), and a deployment object with its 1,000 agents' states.
 */
import type { Browser } from 'playwright-core';
import { launchChromium } from '../services/api/test/console-browser.ts';
import { seedConsoleData } from './console-seed.ts';
import { adminPak, freshStack, machine, percentile, spawnApi, startPostgresServer } from './webhooks-support.ts';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 1000);
const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 5000);
const STACKS = Number(process.env.BENCH_STACKS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 10);

interface Sample {
  firstPaint: number;
  firstContentfulPaint: number;
  dataRendered: number;
  slowestApiMs: number;
  kib: number;
}

/**
 * Records (in the page) when the selector first matches, relative to navigation start. A string,
 * not a function: tsx's transpiled functions reference helpers the page does not have.
 */
const watchFor = (selector: string) => `(() => {
  const check = () => {
    if (window.__rendered === undefined && document.querySelector(${JSON.stringify(selector)})) window.__rendered = performance.now();
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
})();`;

async function measure(browser: Browser, url: string, pak: string, selector: string): Promise<Sample> {
  // bypassCSP: the measuring snippets are evaluated strings, which the console's CSP (rightly) forbids.
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  try {
    await context.addInitScript(`sessionStorage.setItem('brokkr.console.pak', ${JSON.stringify(pak)});`);
    await context.addInitScript(watchFor(selector));
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction('window.__rendered !== undefined', null, { timeout: 60_000 });
    return await page.evaluate(`(() => {
      const paint = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
      const resources = performance.getEntriesByType('resource');
      const api = resources.filter((r) => r.name.includes('/api/'));
      const bytes = [...performance.getEntriesByType('navigation'), ...resources].reduce((sum, r) => sum + (r.transferSize || 0), 0);
      return {
        firstPaint: paint('first-paint'),
        firstContentfulPaint: paint('first-contentful-paint'),
        dataRendered: window.__rendered,
        slowestApiMs: Math.max(0, ...api.map((r) => r.responseEnd - r.requestStart)),
        kib: bytes / 1024,
      };
    })()`);
  } finally {
    await context.close();
  }
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const max = (values: number[]) => Math.max(...values);
const ms = (n: number) => `${n.toFixed(0)} ms`.padStart(8);

async function main(): Promise<void> {
  process.stdout.write(
    `console: ${AGENTS} agents, ${OBJECTS} deployment objects in ${STACKS} stacks, ${RUNS} runs per page\nmachine: ${machine()}\n`,
  );
  const server = await startPostgresServer();
  const stack = await freshStack(server);
  const browser = await launchChromium();
  try {
    const { pak, hash } = adminPak();
    const url = await spawnApi(stack, hash);
    const seed = await seedConsoleData(stack.dbUrl, { agents: AGENTS, stacks: STACKS, objects: OBJECTS });
    process.stdout.write(`seeded ${seed.agents} agents and ${seed.objects} deployment objects in ${seed.seconds.toFixed(1)} s\n\n`);
    const pages: [string, string, string][] = [
      ['fleet', '#/fleet', '[data-testid=fleet-table] tbody tr'],
      ['stacks', '#/stacks', '[data-testid=stacks-table] tbody tr'],
      ['stack (100 objects)', `#/stacks/${seed.bigStack}`, '[data-testid=objects-table] tbody tr'],
      [`object (${seed.agents} agents)`, `#/deployment-objects/${seed.bigObject}`, '[data-testid=object-agents] tbody tr'],
    ];
    process.stdout.write(
      `${'page'.padEnd(24)} ${'first paint'.padStart(12)} ${'FCP'.padStart(8)} ${'data shown'.padStart(11)} ${'(max)'.padStart(8)} ${'slowest API'.padStart(12)} ${'KiB'.padStart(6)}\n`,
    );
    for (const [name, hashRoute, selector] of pages) {
      await measure(browser, `${url}/ui${hashRoute}`, pak, selector); // warm-up: JIT, connection pools, PG caches
      const samples: Sample[] = [];
      for (let i = 0; i < RUNS; i++) samples.push(await measure(browser, `${url}/ui${hashRoute}`, pak, selector));
      const col = (k: keyof Sample) => samples.map((s) => s[k]);
      process.stdout.write(
        `${name.padEnd(24)} ${ms(median(col('firstPaint'))).padStart(12)} ${ms(median(col('firstContentfulPaint')))} ` +
          `${ms(median(col('dataRendered'))).padStart(11)} ${ms(max(col('dataRendered')))} ${ms(median(col('slowestApiMs'))).padStart(12)} ` +
          `${median(col('kib')).toFixed(0).padStart(6)}\n`,
      );
    }
    process.stdout.write('\n(medians over the runs; "data shown" = navigation start → first table row, "(max)" its slowest run)\n');
  } finally {
    await browser.close();
    await stack.close();
    await server.stop();
  }
}

await main();

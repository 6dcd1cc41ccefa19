import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Headless Chromium for the console tests: Debian's `chromium` package (browsers cannot be
 * downloaded here, so playwright-core drives the system binary through `executablePath`). When it
 * is missing, it is installed with apt-get, with progress on stderr, like
 * scripts/build-k8s-assets.sh does for the kube binaries. Set BROKKR_CHROMIUM to use another binary.
 */

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const ARTIFACTS = path.join(REPO, 'test-artifacts', 'console');

const log = (line: string) => process.stderr.write(`[console-browser] ${line}\n`);

function which(binary: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** The Chromium binary, installing Debian's package first when there is none. */
export function chromiumPath(): string {
  const configured = process.env.BROKKR_CHROMIUM ?? which('chromium') ?? which('chromium-browser');
  if (configured) return configured;
  log('chromium is not installed; installing Debian package `chromium` with apt-get (one time, ~1-3 min)…');
  const started = Date.now();
  const apt = (args: string[]) =>
    execFileSync('flock', ['/tmp/brokkr-apt.lock', 'apt-get', ...args], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    apt(['install', '-y', '--no-install-recommends', 'chromium']);
  } catch {
    log('install failed; refreshing the package lists (apt-get update) and trying again…');
    apt(['update']);
    apt(['install', '-y', '--no-install-recommends', 'chromium']);
  }
  const installed = which('chromium');
  if (!installed) throw new Error('apt-get finished but `chromium` is still not on PATH');
  log(`chromium installed in ${Math.round((Date.now() - started) / 1000)} s: ${installed}`);
  return installed;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // The tests run as root in a container: Chromium refuses its sandbox there.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** Saves a full-page screenshot under test-artifacts/console/ and prints its path. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  process.stdout.write(`      screenshot: ${path.relative(REPO, file)}\n`);
  return file;
}

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { cacheDir, scriptsDir } from './paths.ts';

/**
 * kube-apiserver + etcd binaries (envtest-style assets). They are built from the Go module proxy by
 * scripts/build-k8s-assets.sh and cached under ~/.cache/brokkr/k8s/v<version>/bin, or found through
 * KUBEBUILDER_ASSETS when someone brings their own.
 */
export function findKubeAssets(): string | undefined {
  const fromEnv = process.env.KUBEBUILDER_ASSETS;
  if (fromEnv && hasAssets(fromEnv)) return fromEnv;
  const root = path.join(cacheDir, 'k8s');
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  return versions.map((v) => path.join(root, v, 'bin')).find(hasAssets);
}

function hasAssets(dir: string): boolean {
  return existsSync(path.join(dir, 'kube-apiserver')) && existsSync(path.join(dir, 'etcd'));
}

export interface EnsureKubeAssetsOptions {
  /** Every progress line of the build (one per step, with the elapsed seconds). */
  onProgress?: (line: string) => void;
  /** Aborting kills the build (the Go toolchain and all) and rejects. */
  signal?: AbortSignal;
}

/**
 * The assets directory, built first when missing (minutes when cold: the module download is about
 * 1 GB and kube-apiserver takes a while to compile on 2 cores). The build script takes a lock, so
 * two callers never build at once.
 */
export async function ensureKubeAssets(options: EnsureKubeAssetsOptions = {}): Promise<string> {
  const found = findKubeAssets();
  if (found) return found;
  // Its own process group, so an abort stops `go build` and its compilers, not just bash.
  const build = spawn('bash', [path.join(scriptsDir, 'build-k8s-assets.sh')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const onAbort = () => {
    if (build.pid) process.kill(-build.pid, 'SIGTERM');
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let dir = '';
  const tail: string[] = [];
  readline.createInterface({ input: build.stdout }).on('line', (line) => {
    dir = /^KUBEBUILDER_ASSETS=(.*)$/.exec(line)?.[1] ?? dir;
  });
  // Only the script's own step lines: `go get` lists hundreds of downloaded modules.
  readline.createInterface({ input: build.stderr }).on('line', (line) => {
    if (line.startsWith('[build-k8s-assets')) options.onProgress?.(line);
    tail.push(line);
    if (tail.length > 20) tail.shift();
  });
  const code = await new Promise<number | null>((resolve) => build.once('exit', resolve));
  options.signal?.removeEventListener('abort', onAbort);
  if (options.signal?.aborted) throw new Error('the kube-apiserver build was stopped');
  if (code !== 0 || !dir) throw new Error(`scripts/build-k8s-assets.sh failed (exit ${code}):\n${tail.join('\n')}`);
  return dir;
}

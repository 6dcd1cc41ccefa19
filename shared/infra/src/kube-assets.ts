import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { cacheDir, scriptsDir } from './paths.ts';

/**
 * kube-apiserver + etcd binaries (envtest-style assets), and for clusters where pods run the controllers,
 * the scheduler and KWOK. They are built from the Go module proxy by
 * scripts/build-k8s-assets.sh and cached under ~/.cache/brokkr/k8s/v<version>/bin, or found through
 * KUBEBUILDER_ASSETS when someone brings their own.
 */
export function findKubeAssets(kind: KubeAssetsKind = 'bare'): string | undefined {
  const fromEnv = process.env.KUBEBUILDER_ASSETS;
  if (fromEnv && hasAssets(fromEnv, kind)) return fromEnv;
  const root = path.join(cacheDir, 'k8s');
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  return versions.map((v) => path.join(root, v, 'bin')).find((dir) => hasAssets(dir, kind));
}

/** `bare`: kube-apiserver and etcd. `full`: also the controllers, the scheduler, KWOK and its stages. */
export type KubeAssetsKind = 'bare' | 'full';

const BINARIES: Record<KubeAssetsKind, string[]> = {
  bare: ['kube-apiserver', 'etcd'],
  full: ['kube-apiserver', 'etcd', 'kube-controller-manager', 'kube-scheduler', 'kwok', '../kwok-stages/pod-delete.yaml'],
};

function hasAssets(dir: string, kind: KubeAssetsKind): boolean {
  return BINARIES[kind].every((name) => existsSync(path.join(dir, name)));
}

export interface EnsureKubeAssetsOptions {
  /** What must be there (default `full`: the build script builds everything at once). */
  kind?: KubeAssetsKind;
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
  const found = findKubeAssets(options.kind ?? 'full');
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

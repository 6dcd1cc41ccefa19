import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// This file sits at shared/render/{src,dist}/locate.*: the repository's scripts are three levels up.
const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/build-renderer.sh');

let located: Promise<string> | undefined;

/**
 * The brokkr-render binary built from this checkout's tools/renderer: the cached one when its
 * sources have not changed (milliseconds), else built first by scripts/build-renderer.sh (minutes
 * with empty Go caches; progress on stderr). Asked once per process.
 */
export function locateRenderer(): Promise<string> {
  located ??= new Promise<string>((resolve, reject) => {
    const child = execFile('bash', [script], { maxBuffer: 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(new Error(`scripts/build-renderer.sh failed: ${err.message}`));
      const binary = stdout.trim().split('\n').pop();
      if (!binary) return reject(new Error('scripts/build-renderer.sh printed no path'));
      resolve(binary);
    });
    // The build takes a while: its progress goes where ours goes.
    child.stderr?.pipe(process.stderr);
  }).catch((err: unknown) => {
    located = undefined;
    throw err;
  });
  return located;
}

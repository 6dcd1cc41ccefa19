#!/usr/bin/env node
// The `brokkr` command. It runs, in order of preference: the standalone bundle a packed CLI ships
// (dist/brokkr.mjs, `npm pack` builds it), the compiled workspace CLI (dist/bin.js, `npm run
// build`), or — in a fresh clone right after `npm ci`, before any build — the TypeScript sources
// through tsx, in a child process that sees the workspace packages' sources (`development`).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const at = (relative) => fileURLToPath(new URL(relative, import.meta.url));

if (existsSync(at('../dist/brokkr.mjs'))) await import('../dist/brokkr.mjs');
else if (existsSync(at('../dist/bin.js')) && existsSync(at('../../../shared/contracts/dist/index.js'))) await import('../dist/bin.js');
else {
  const tsx = createRequire(import.meta.url).resolve('tsx');
  const args = ['--import', tsx, '--conditions=development', at('../src/bin.ts'), ...process.argv.slice(2)];
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
}

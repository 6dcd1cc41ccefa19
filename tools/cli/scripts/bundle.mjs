// `npm pack` in tools/cli (prepack): one ES module with every dependency inlined (commander, yaml
// and the workspace's packages), so the tarball installs and runs on its
// own with no registry access to the workspace packages.
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('../src/bin.ts', import.meta.url).pathname],
  outfile: new URL('../dist/brokkr.mjs', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['development'],
  // commander and yaml are CommonJS: give the bundle a require of its own.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  legalComments: 'inline',
});

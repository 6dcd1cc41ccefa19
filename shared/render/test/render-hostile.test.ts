import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import type { RenderJob, RenderResult, Renderer } from '../src/index.ts';
import { chartArchive, tarGz, treeArchive, type Entry } from './fixtures/archive.ts';
import { testRenderer } from './fixtures/renderer.ts';

const CM = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n${data}\n`;

const helm = (files: Record<string, string>, extra: Entry[] = []): RenderJob => ({
  kind: 'helm',
  archive: chartArchive('evil', files, extra),
  release: { name: 'r', namespace: 'n' },
});
const kustomize = (files: Record<string, string>, extra: Entry[] = []): RenderJob => ({
  kind: 'kustomize',
  archive: treeArchive(files, extra),
});

const KUSTOMIZATION = { 'kustomization.yaml': 'resources:\n  - cm.yaml\n', 'cm.yaml': CM('  a: "1"') };

function expectFailure(result: RenderResult, reason: string, message: RegExp | string): void {
  expect(result).to.deep.include({ ok: false, reason });
  const error = result.ok ? '' : result.error;
  if (typeof message === 'string') expect(error).to.include(message);
  else expect(error).to.match(message);
}

/** A TCP listener on the loopback that counts who connects: nothing a render does may reach it. */
async function listener(): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, connections: () => count };
}

describe('@brokkr/render: hostile charts and overlays', function () {
  this.timeout(120_000);
  let renderer: Renderer;

  before(async () => {
    renderer = await testRenderer({
      limits: { timeoutMs: 20_000, cpuSeconds: 3, memoryBytes: 384 * 1024 * 1024, outputBytes: 1024 * 1024 },
    });
  });
  after(() => renderer.close());

  describe('files outside the chart', () => {
    it(".Files reaches only the chart's own files: ../../etc/passwd, /etc/passwd and a glob over everything find nothing of the host", async () => {
      const files = {
        'templates/cm.yaml': CM(
          [
            '  parent: {{ .Files.Get "../../etc/passwd" | quote }}',
            '  absolute: {{ .Files.Get "/etc/passwd" | quote }}',
            '  proc: {{ .Files.Get "/proc/self/environ" | quote }}',
            '  glob: {{ range $path, $_ := .Files.Glob "**" }}{{ $path }} {{ end }}',
          ].join('\n'),
        ),
        'data/mine.txt': 'mine',
      };
      const result = await renderer.render('t', helm(files));
      if (!result.ok) throw new Error(result.error);
      expect(result.yaml).to.include('parent: ""').and.include('absolute: ""').and.include('proc: ""');
      expect(result.yaml).to.include('glob: data/mine.txt');
      expect(result.yaml).not.to.include('root:');
    });

    it('a values.schema.json $ref to a file of the host or to a URL is refused, and no connection is made', async () => {
      const local = await listener();
      try {
        for (const ref of ['file:///etc/passwd', `http://127.0.0.1:${local.port}/schema.json`]) {
          const schema = JSON.stringify({ type: 'object', properties: { a: { $ref: ref } } });
          const result = await renderer.render('t', helm({ 'values.schema.json': schema, 'templates/cm.yaml': CM('  a: "1"') }));
          expectFailure(result, 'unsupported', 'references outside values.schema.json are not supported');
        }
        expect(local.connections()).to.equal(0);
      } finally {
        local.server.close();
      }
    });
  });

  describe('archives that reach outside themselves', () => {
    const cases: [string, Entry, RegExp][] = [
      [
        'a symlink out of the archive',
        { name: 'evil/templates/passwd.yaml', type: 'symlink', linkname: '../../../etc/passwd' },
        /symlink .* points outside the archive/,
      ],
      [
        'an absolute symlink',
        { name: 'evil/templates/passwd.yaml', type: 'symlink', linkname: '/etc/passwd' },
        /symlink .* points outside the archive/,
      ],
      ['a hard link to a host path', { name: 'evil/templates/passwd.yaml', type: 'hardlink', linkname: '/etc/passwd' }, /absolute path/],
      ['an entry with ..', { name: 'evil/../../etc/cron.d/x', data: 'x' }, /reaches outside the archive/],
      ['an absolute entry', { name: '/etc/cron.d/x', data: 'x' }, /absolute path/],
      ['a device file', { name: 'evil/templates/tty', type: 'char' }, /device, FIFO or other special file/],
    ];
    for (const [what, entry, message] of cases) {
      it(`refuses a chart with ${what}`, async () => {
        expectFailure(await renderer.render('t', helm({ 'templates/cm.yaml': CM('  a: "1"') }, [entry])), 'invalid', message);
      });
    }

    it('refuses a kustomize tree with a symlink out of the archive; a symlink to a file inside it is read as that file', async () => {
      const out = await renderer.render(
        't',
        kustomize({ 'kustomization.yaml': 'resources:\n  - cm.yaml\n' }, [
          { name: 'cm.yaml', type: 'symlink', linkname: '../../../../etc/passwd' },
        ]),
      );
      expectFailure(out, 'invalid', /symlink cm\.yaml points outside the archive/);
      const inside = await renderer.render(
        't',
        kustomize({ 'kustomization.yaml': 'resources:\n  - cm.yaml\n', 'shared/cm.yaml': CM('  a: "1"') }, [
          { name: 'cm.yaml', type: 'symlink', linkname: 'shared/cm.yaml' },
        ]),
      );
      expect(inside).to.deep.include({ ok: true });
    });

    it('refuses a symlink to a directory and a link that points to nothing', async () => {
      expectFailure(
        await renderer.render(
          't',
          kustomize(KUSTOMIZATION, [
            { name: 'sub', type: 'dir' },
            { name: 'link', type: 'symlink', linkname: 'sub' },
          ]),
        ),
        'unsupported',
        /points to a directory/,
      );
      expectFailure(
        await renderer.render('t', kustomize(KUSTOMIZATION, [{ name: 'dangling', type: 'symlink', linkname: 'nowhere.yaml' }])),
        'invalid',
        /points to nothing in the archive/,
      );
    });
  });

  describe('bombs: the render stops at a limit and the next render is served as usual', () => {
    it('a gzip bomb (a file that unpacks past the per-file cap, files that unpack past the total), too many entries, an archive over its size', async () => {
      const bomb = chartArchive('evil', { 'templates/cm.yaml': CM('  a: "1"'), 'files/zeros': '\0'.repeat(6 * 1024 * 1024) });
      expect(bomb.length).to.be.lessThan(64 * 1024);
      expectFailure(
        await renderer.render('t', { kind: 'helm', archive: bomb }),
        'limit',
        /files\/zeros is \d+ bytes, more than the limit of 5242880 per file/,
      );
      const wide = tarGz(Array.from({ length: 11 }, (_, i) => ({ name: `evil/files/zeros-${i}`, data: Buffer.alloc(5_000_000) })));
      expectFailure(
        await renderer.render('t', { kind: 'helm', archive: wide }),
        'limit',
        'the archive unpacks to more than 52428800 bytes',
      );
      const many = tarGz(Array.from({ length: 5_001 }, (_, i) => ({ name: `d/f${i}`, data: '' })));
      expectFailure(await renderer.render('t', { kind: 'kustomize', archive: many }), 'limit', 'more than 5000 entries');
      expectFailure(
        await renderer.render('t', { kind: 'helm', archive: Buffer.alloc(11 * 1024 * 1024) }),
        'limit',
        /the archive is \d+ bytes, more than the limit/,
      );
    });

    it('`until` and nested ranges that loop for ever, output that grows without end, recursion through tpl: each stops at a memory or CPU limit', async () => {
      const bombs: Record<string, [string, RegExp]> = {
        'until with output': ['{{ range until 100000000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}', /memory/],
        'a list of a billion': ['{{ $x := until 1000000000 }}{{ len $x }}', /memory/],
        repeat: ['{{ repeat 1000000000 "x" }}', /memory/],
        'nested ranges (CPU only)': ['{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}', /CPU time/],
        'tpl recursion': [
          '{{ define "r" }}{{ tpl "{{ include \\"r\\" . }}{{ include \\"r\\" . }}" . }}{{ end }}{{ include "r" . }}',
          /memory|CPU time/,
        ],
      };
      for (const [what, [template, message]] of Object.entries(bombs)) {
        const result = await renderer.render('t', helm({ 'templates/x.yaml': template }));
        // On a machine busy enough, the wall-clock deadline may come before 3 s of CPU time.
        if (!result.ok && result.reason === 'timeout' && message.source.includes('CPU')) continue;
        expect(result.ok, what).to.equal(false);
        expectFailure(result, 'limit', message);
      }
      const fine = await renderer.render('t', helm({ 'templates/cm.yaml': CM('  a: "1"') }));
      expect(fine).to.deep.include({ ok: true });
    });

    it('include recursion is cut by Helm itself, with a message of bounded size', async () => {
      const result = await renderer.render(
        't',
        helm({ 'templates/x.yaml': '{{ define "r" }}{{ include "r" . }}{{ end }}{{ include "r" . }}' }),
      );
      expectFailure(result, 'invalid', /rendering template has a nested reference name: r/);
      expect(result.ok || result.error.length).to.be.at.most(4200);
    });

    it('output over the cap is a limit', async () => {
      const result = await renderer.render(
        't',
        helm({ 'templates/x.yaml': CM('{{ range until 60000 }}  k{{ . }}: "{{ . }}"\n{{ end }}') }),
      );
      expectFailure(result, 'limit', 'the rendered output is larger than 1048576 bytes');
    });
  });

  describe('the network', () => {
    it('a kustomize file fetched by URL from a local listener is refused, and no connection reaches the listener', async () => {
      const local = await listener();
      try {
        const files = {
          ...KUSTOMIZATION,
          'kustomization.yaml': `resources:\n  - cm.yaml\npatches:\n  - path: http://127.0.0.1:${local.port}/patch.yaml\n`,
        };
        expectFailure(await renderer.render('t', kustomize(files)), 'unsupported', 'network access is not supported');
        expect(local.connections()).to.equal(0);
      } finally {
        local.server.close();
      }
    });
  });
});

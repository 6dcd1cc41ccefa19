import { globSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { fastPathProvesValid } from '../src/yaml/fast-path.ts';
import { DEFAULT_YAML_LIMITS, type YamlLimits } from '../src/yaml/limits.ts';
import { quickVerdict, validateDeploymentYaml, validateWithoutFastPath, type YamlVerdict } from '../src/yaml/validate.ts';
import { DECLINED_MANIFESTS, manifestStream, PLAIN_BLOCK_MANIFESTS } from './yaml-corpus.ts';

/**
 * The fast path (src/yaml/fast-path.ts) may only answer "valid, exactly as the full validator
 * would" or "don't know". This differential test checks that on realistic manifests, thousands of
 * seeded random mutations of them, random block-style documents built from tricky keys and
 * scalars, and the known invalid and hostile inputs. A failure prints the seed and the input;
 * YAML_FUZZ_SEED=<n> replays a run.
 */
const SEED = Number(process.env.YAML_FUZZ_SEED ?? 20261124);
const MUTANTS = Number(process.env.YAML_FUZZ_MUTANTS ?? 8_000);
const RANDOM_DOCUMENTS = Number(process.env.YAML_FUZZ_DOCUMENTS ?? 6_000);

const plain = { isDeletionMarker: false };
const SMALL_LIMITS: YamlLimits = { maxDocuments: 3, maxAnchors: 2, maxAliases: 2, maxNodes: 40, maxExpandedNodes: 60 };
const LONE_SURROGATE = /\p{Cs}/u;

/** mulberry32: a tiny seeded generator, so every failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const shown = (content: string) => JSON.stringify(content.length > 2000 ? `${content.slice(0, 2000)}…` : content);

interface Tally {
  checked: number;
  accepted: number;
}

/**
 * The property: when the fast path says valid, the validator without it says `{ ok: true }`, and
 * validateDeploymentYaml (fast path first) gives exactly the verdict it gave before.
 */
function checkAgreement(content: string, limits: YamlLimits, tally: Tally, what: string): void {
  const before: YamlVerdict = validateWithoutFastPath(content, plain, limits);
  // Callers check NUL and lone surrogates first (validate.ts); the fast path alone assumes that.
  const accepted = !LONE_SURROGATE.test(content) && fastPathProvesValid(content, limits);
  tally.checked += 1;
  if (accepted) tally.accepted += 1;
  if (accepted && !before.ok) {
    expect.fail(`${what} (seed ${SEED}): the fast path accepted content the validator refuses (${before.reason}):\n${shown(content)}`);
  }
  expect(validateDeploymentYaml(content, plain, limits), `${what} (seed ${SEED}): ${shown(content)}`).to.deep.equal(before);
}

// Characters a mutation inserts: every YAML indicator, whitespace the fast path declines, and text.
const INSERTS = [
  ...'-?:,[]{}#&*!|>\'"%@`\\ \t\r\n.~0aZ_/',
  '\u2028',
  '\ufeff',
  '\u0085',
  '\u00e9',
  '\ud83d\ude00',
  ': ',
  ' #',
  '- ',
  '---\n',
  '...\n',
];
const CORE_WORDS = [
  'true',
  'null',
  '~',
  '1',
  '0x1f',
  '1e3',
  '.inf',
  'False',
  '"a"',
  "'a'",
  '',
  '-',
  '{}',
  '[]',
  '[a]',
  '*x',
  '&x y',
  '!t y',
  '|',
  '>-',
];

type Random = () => number;
const int = (random: Random, below: number) => Math.floor(random() * below);
const pick = <T>(random: Random, items: readonly T[]): T => items[int(random, items.length)] as T;

// A key line's indentation and `- `, and its plain key.
const KEY_LINE = /^(\s*(?:- )?)([\w./-]+):/;

/** Edits of the content at one position: characters deleted, duplicated or inserted. */
const CHARACTER_EDITS: ((random: Random, content: string, at: number) => string)[] = [
  (random, content, at) => content.slice(0, at) + content.slice(at + 1 + int(random, 3)),
  (_, content, at) => content.slice(0, at) + content.slice(Math.max(0, at - 1), at + 1) + content.slice(at + 1),
  (random, content, at) => content.slice(0, at) + pick(random, INSERTS) + content.slice(at),
];

/** Edits of one line: indentation, duplicated keys, keys and values replaced, lines moved. */
const LINE_EDITS: ((random: Random, lines: string[], i: number) => void)[] = [
  (random, lines, i) => void (lines[i] = ' '.repeat(1 + int(random, 3)) + (lines[i] ?? '')),
  (_, lines, i) => void (lines[i] = (lines[i] ?? '').replace(/^ {1,2}/, '')),
  // A duplicate key when the line is a key line, written the same way or another.
  (_, lines, i) => void lines.splice(i, 0, lines[i] ?? ''),
  (random, lines, i) =>
    void lines.splice(
      i,
      0,
      (lines[i] ?? '').replace(KEY_LINE, (_, lead: string, key: string) => `${lead}${pick(random, [`"${key}"`, `'${key}'`, `${key} `])}:`),
    ),
  (random, lines, i) => void (lines[i] = (lines[i] ?? '').replace(/: .*$/, `: ${pick(random, CORE_WORDS)}`)),
  (random, lines, i) => void (lines[i] = (lines[i] ?? '').replace(KEY_LINE, (_, lead: string) => `${lead}${pick(random, CORE_WORDS)}:`)),
  (_, lines, i) => void lines.splice(i, 1),
  (_, lines, i) => void lines.splice(i, 2, lines[i + 1] ?? '', lines[i] ?? ''),
  (_, lines, i) => void lines.splice(i, 2, `${lines[i] ?? ''} ${(lines[i + 1] ?? '').trimStart()}`),
];

/** One random edit of the content. */
function mutate(random: Random, content: string): string {
  if (random() < 0.4) return pick(random, CHARACTER_EDITS)(random, content, int(random, content.length + 1));
  const lines = content.split('\n');
  pick(random, LINE_EDITS)(random, lines, int(random, lines.length));
  return lines.join('\n');
}

// Building blocks of random block-style documents: mostly ordinary, some tricky.
const ORDINARY_KEYS = ['a', 'b', 'name', 'app.kubernetes.io/name', 'image', 'x_y', 'containerPort'];
const ORDINARY_SCALARS = [
  'v',
  'nginx:1.25',
  '80',
  '100m',
  '"quoted"',
  "'single'",
  'a b c',
  '-1',
  '--port=8080',
  'true',
  '/path/to/x',
  '{}',
  '[]',
];
const TRICKY_KEYS = [
  'a',
  'b',
  'name',
  'app.kubernetes.io/name',
  '_x',
  '/p',
  '.env',
  'a b',
  'true',
  'Null',
  '1',
  '-x',
  '"a"',
  "'a'",
  '"b c"',
  "'it''s'",
  '"\\u0061"',
  '<<',
  '? a',
  'a:b',
  'x#y',
  'x #y',
];
const TRICKY_SCALARS = [
  'v',
  '-1',
  '--flag=1',
  '0.5',
  'a b',
  'a: b',
  'a #c',
  'a#c',
  'b]',
  '{}',
  '[]',
  '[a]',
  '{a: 1}',
  '*x',
  '&x v',
  '!t v',
  '|',
  '>',
  '%x',
  '@x',
  '`x`',
  "'s'",
  "'it''s'",
  "'open",
  '"d"',
  '"\\x41\\u00e9\\n"',
  '"\\q"',
  '"\\U0001F600"',
  '"open',
  '~',
  'null',
  'x:',
  '---',
  '...',
  '? x',
  ': x',
  ',x',
  'é',
  '😀',
];

const randomKey = (random: Random) => pick(random, random() < 0.7 ? ORDINARY_KEYS : TRICKY_KEYS);
const randomScalar = (random: Random) => pick(random, random() < 0.7 ? ORDINARY_SCALARS : TRICKY_SCALARS);

/** A block mapping or sequence at `indent`, with comments and blank lines here and there. */
function randomBlock(random: Random, depth = 0, indent = 0): string {
  const isSequence = random() < 0.3;
  const lines: string[] = [];
  for (let i = 0, entries = 1 + int(random, 4); i < entries; i++) {
    lines.push(isSequence ? randomItem(random, depth, indent) : randomPair(random, depth, indent));
    if (random() < 0.1) lines.push(random() < 0.5 ? '' : `${' '.repeat(int(random, 4))}# note`);
  }
  return lines.join('\n');
}

/** `key: value`, or `key:` and a nested block (deeper, or at the key's own indentation). */
function randomPair(random: Random, depth: number, indent: number, head = ' '.repeat(indent)): string {
  const key = `${head}${randomKey(random)}:`;
  if (depth >= 3 || random() >= 0.35) return `${key} ${randomScalar(random)}`;
  const childIndent = random() < 0.25 ? indent : indent + 1 + int(random, 3);
  return `${key}${random() < 0.2 ? ' # comment' : ''}\n${randomBlock(random, depth + 1, childIndent)}`;
}

/** `- value`, or `- key: value` (a compact mapping, maybe continued at the key's column). */
function randomItem(random: Random, depth: number, indent: number): string {
  const dash = `${' '.repeat(indent)}- `;
  if (random() < 0.6) return `${dash}${randomScalar(random)}`;
  const first = randomPair(random, depth, indent + 2, dash);
  return random() < 0.5 ? first : `${first}\n${randomPair(random, depth, indent + 2)}`;
}

describe('api yaml fast path (differential against the full validator)', () => {
  const corpus = Object.entries({ ...PLAIN_BLOCK_MANIFESTS, ...DECLINED_MANIFESTS });

  it('proves every plain block-style manifest of the corpus valid, and declines the rest', () => {
    for (const [name, manifest] of Object.entries(PLAIN_BLOCK_MANIFESTS)) {
      expect(fastPathProvesValid(manifest, DEFAULT_YAML_LIMITS), name).to.equal(true);
      expect(validateWithoutFastPath(manifest, plain), name).to.deep.equal({ ok: true });
    }
    for (const [name, manifest] of Object.entries(DECLINED_MANIFESTS)) {
      expect(fastPathProvesValid(manifest, DEFAULT_YAML_LIMITS), name).to.equal(false);
      expect(validateDeploymentYaml(manifest, plain), name).to.deep.equal({ ok: true });
    }
    const stream = manifestStream(50 * 1024);
    expect(fastPathProvesValid(stream, DEFAULT_YAML_LIMITS), '50 KiB stream').to.equal(true);
    expect(validateWithoutFastPath(stream, plain), '50 KiB stream').to.deep.equal({ ok: true });
    const accepted = corpus.filter(([, m]) => fastPathProvesValid(m, DEFAULT_YAML_LIMITS)).length;
    console.log(`      fast path: ${accepted} of ${corpus.length} realistic manifests proved valid`);
  });

  it(`agrees with the full validator on ${MUTANTS} seeded mutations of the corpus`, function () {
    this.timeout(300_000); // ~10 s on an idle core; a busy CI machine may take several times that
    const random = rng(SEED);
    const tally: Tally = { checked: 0, accepted: 0 };
    for (let i = 0; i < MUTANTS; i++) {
      let content = pick(random, corpus)[1];
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) content = mutate(random, content);
      checkAgreement(content, i % 5 === 0 ? SMALL_LIMITS : DEFAULT_YAML_LIMITS, tally, `mutant ${i}`);
    }
    console.log(`      fast path: proved ${tally.accepted} of ${tally.checked} mutants valid (the rest went to the parser)`);
    expect(tally.accepted, 'some mutants stay valid and inside the subset').to.be.above(MUTANTS / 10);
  });

  it(`agrees with the full validator on ${RANDOM_DOCUMENTS} random block-style streams of tricky keys and scalars`, function () {
    this.timeout(300_000);
    const random = rng(SEED + 1);
    const tally: Tally = { checked: 0, accepted: 0 };
    for (let i = 0; i < RANDOM_DOCUMENTS; i++) {
      const documents = Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomBlock(random));
      const separator = pick(random, ['\n---\n', '\n...\n---\n', '\n--- # next\n', '\n---\n# c\n']);
      const content = (random() < 0.2 ? '---\n' : '') + documents.join(separator) + (random() < 0.8 ? '\n' : '');
      checkAgreement(content, i % 4 === 0 ? SMALL_LIMITS : DEFAULT_YAML_LIMITS, tally, `random stream ${i}`);
    }
    console.log(`      fast path: proved ${tally.accepted} of ${tally.checked} random streams valid`);
    expect(tally.accepted).to.be.above(RANDOM_DOCUMENTS / 20);
  });

  it('agrees with the full validator on every YAML file of this repository (Helm charts and templates, examples, CI)', () => {
    const root = new URL('../../../', import.meta.url).pathname;
    const skipped = /(^|\/)(node_modules|\.git|dist|\.brokkr)$/;
    const files = globSync('**/*.{yaml,yml}', {
      cwd: root,
      exclude: (entry) => skipped.test(entry),
    });
    expect(files.length, 'YAML files found').to.be.above(20);
    const tally: Tally = { checked: 0, accepted: 0 };
    for (const file of files) {
      const content = readFileSync(`${root}${file}`, 'utf8');
      checkAgreement(content, DEFAULT_YAML_LIMITS, tally, file);
      // Each document on its own too: a Helm template's documents differ in what they use.
      for (const [i, doc] of content.split(/^---$/m).entries()) checkAgreement(doc, DEFAULT_YAML_LIMITS, tally, `${file} document ${i}`);
    }
    console.log(
      `      fast path: proved ${tally.accepted} of ${tally.checked} files and documents of ${files.length} repository files valid`,
    );
  });

  it('proves the subset’s corner cases valid, each of which the parser accepts too', () => {
    const cases = [
      'a:\n- x\n- y:\n  - z\nb: 1\n', // sequences at their key's indentation
      '-   a: 1\n    b: 2\n- c\n', // a compact mapping at the column after several spaces
      '- a:\n  - b\n  c: d\n- e:\n    f: g\n',
      'a: ---\nb: ...\n', // markers not at column 0 are scalars
      '- ---\n- ...\n',
      'a: b]\nc: d, e\nf: -1\ng: --x\nh: x:y\ni: a#b\n',
      'a: \'it\'\'s\'\nb: "\\x41\\u00e9\\\\ \\"q\\""\nc: \'\'\nd: ""\n',
      '"a b": 1\n\'c d\': 2\n"": 3\n_e: 4\n/f: 5\n.env: 6\n',
      'a: 1 # c\n# x\n  # y\nb: 2 #\n',
      'a:\n# a comment at column 0\n  b: 1\n',
      '---\n...\n---\na: 1\n...\n',
      '--- # first\na: 1\n---   \n- b\n',
      'a:\nb:\nc: ~\nd: null\n', // null values (a non-null document all the same)
      'a: {}\nb: []\nc:\n- {}\n- []\n',
      'navn: blåbær 😀\nnøkkel: "ü"\n',
      `${'k'.repeat(1000)}: v\n`,
      '...\n---\na: 1\n...\n...\n---\nb: 1\n', // `...` without a document is tolerated
      'a: \u00a0b\nc: d\u00a0#e\n', // a no-break space is content, not white space
      ...[...'0abtnvfre "/\\N_LP'].map((escape) => `a: "\\${escape}"\n`),
      'a: "\\uD800"\n', // an escape is ASCII text: NUL and lone-surrogate rules apply to the raw text
    ];
    for (const content of cases) {
      expect(fastPathProvesValid(content, DEFAULT_YAML_LIMITS), JSON.stringify(content)).to.equal(true);
      expect(validateWithoutFastPath(content, plain), JSON.stringify(content)).to.deep.equal({ ok: true });
    }
  });

  it('declines every invalid, hostile or unusual input, so its verdict and message stay the parser’s', () => {
    const laughs = [
      'a: &a [x,x,x,x,x,x,x,x,x,x]',
      ...'bcdefgh'.split('').map((n, i) => `${n}: &${n} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(',')}]`),
    ].join('\n');
    const deep = (levels: number) => Array.from({ length: levels }, (_, i) => `${' '.repeat(i)}a:`).join('\n');
    const cases = [
      '~',
      '# only a comment',
      '---\n---\n',
      'a: 1\na: 2',
      'a: 1\n"a": 2',
      "a: 1\n'a': 2",
      'a: 1\na : 2',
      'a: *missing',
      laughs,
      'a: "\u0000"',
      'a: \ud800',
      '\ufeffa: 1',
      'a: 1\r\nb: 2',
      'a:\tb',
      'a: b\n  c',
      'a:\n  b\n',
      'a: b: c',
      '- a: b: c',
      'a: [',
      'a: {b: 1',
      'a: |\n  x',
      'a: >\n  x',
      '%YAML 1.2\n---\na: 1',
      '? a\n: b',
      '- - a',
      '-\n  a: 1',
      'a: -',
      'true: 1\nTrue: 2',
      '1: a\n1.0: b',
      'null: a\n~: b',
      `${'k'.repeat(1030)}: v`,
      'a: "x"y',
      "a: 'x'#y",
      'a: "\\q"',
      'a: "open',
      'a:\n  b: 1\n c: 2',
      'a: 1\n- b',
      '- a\nb: 1',
      '  a: 1\nb: 2',
      '--- a: 1',
      'a: 1\n...\nb: 2',
      deep(65),
      deep(200),
      'a: 1\n---\nb: 1\n---\nc: 1\n---\nd: 1\n',
      `${Array.from({ length: 30 }, (_, i) => `k${i}: v`).join('\n')}\n`,
    ];
    const tally: Tally = { checked: 0, accepted: 0 };
    for (const content of cases) {
      // The last two pass a limit only with the small limits.
      checkAgreement(
        content,
        content.startsWith('a: 1\n---') || content.startsWith('k0:') ? SMALL_LIMITS : DEFAULT_YAML_LIMITS,
        tally,
        'case',
      );
    }
    expect(tally.accepted, 'none of these is inside the subset and valid').to.equal(0);
  });

  it('keeps the refusals before parsing (NUL, lone surrogates, blank, blank deletion markers) in quickVerdict', () => {
    expect(quickVerdict('a: \u0000', plain)).to.deep.equal({ ok: false, reason: 'content contains a NUL character' });
    expect(quickVerdict('a: \ud800', plain)).to.deep.equal({ ok: false, reason: 'content is not valid Unicode' });
    expect(quickVerdict(' \n', plain)).to.deep.equal({ ok: false, reason: 'YAML content must not be blank' });
    expect(quickVerdict(' \n', { isDeletionMarker: true })).to.deep.equal({ ok: true });
    expect(quickVerdict('kind: Pod\n', plain)).to.deep.equal({ ok: true });
    expect(quickVerdict('kind: [Pod]\n', plain), 'a flow sequence is the parser’s').to.equal(undefined);
    expect(quickVerdict('a: 1\na: 2\n', plain), 'so is a duplicate key').to.equal(undefined);
  });
});

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { runJob, type JobResult } from '../src/jobs.ts';

/**
 * Templates are a tenant's text: nothing in them may run as JavaScript. The engine evaluates the
 * parsed tree (no generated code), so these payloads — the ones that ran commands through
 * nunjucks' compiler, the classic Jinja-family escapes, and generated templates with hostile
 * text in every literal and name position — either are refused or render as data. Each payload
 * would, if it ran, write a canary file and set a canary global; neither may change. The engine
 * runs in-process here on purpose: the sandbox around it (templates-sandbox.test.ts) is the
 * second wall, this is the first.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'brokkr-hostile-'));
const canaryFile = path.join(dir, 'canary');
const code = `(globalThis.__brokkrCanary = 1, process.getBuiltinModule("fs").writeFileSync(${JSON.stringify(canaryFile)}, "x"))`;

function render(templateContent: string, parameters: unknown = { x: 1, s: 'a', xs: [1, 2], o: { k: 'v' } }): JobResult {
  return runJob({ kind: 'render', templateContent, parametersSchema: '{}', parameters, maxOutputChars: 100_000 });
}

function expectUntouched(): void {
  expect((globalThis as Record<string, unknown>).__brokkrCanary, 'canary global').to.equal(undefined);
  expect(existsSync(canaryFile), 'canary file').to.equal(false);
}

const REVIEW_PAYLOADS: Record<string, string> = {
  'a string after `is`': `{{ 1 is 'odd")&&0||${code},env.getTest("odd' }}`,
  'a string `set` target': `{% set 'o",${code},"' = 1 %}{{ o }}`,
  'a call name with a backslash': `{{ x["\\\\"](1) }}{{ ("\\\\"+${JSON.stringify(code)})() }}`,
  'the review payload that ran `id`': `{{ 1 is 'odd")&&0||JSON.stringify(process.getBuiltinModule("child_process").execSync("id").toString()),env.getTest("odd' }}`,
  'the review payload through `set`': `{% set 'o",JSON.stringify(process.getBuiltinModule("child_process").execSync("id").toString()),"' = 1 %}{{ o }}`,
};

const CLASSIC_ESCAPES: Record<string, string> = {
  'constructor.constructor': `{{ x.constructor.constructor(${JSON.stringify(code)})() }}`,
  "''.constructor.constructor": `{{ ''.constructor.constructor(${JSON.stringify(code)})() }}`,
  'range.constructor': `{{ range.constructor(${JSON.stringify(code)})() }}`,
  ['__proto__']: `{{ o.__proto__ }}{{ o["__proto__"]["constructor"] }}{% set d = {"__proto__": {"polluted": 1}} %}{{ d.polluted }}`,
  'cycler / joiner / lipsum': '{{ cycler(1, 2).next() }}{{ joiner()() }}{{ lipsum() }}',
  'a filter that returns a function': '{{ (x | default(value=range)).constructor }}',
  'a call on a filter result': `{{ (s | upper)(${JSON.stringify(code)}) }}`,
  'map over constructor': '{{ xs | map(attribute="constructor") | first }}',
  'a regex literal': '{{ r/a/ }}',
  'a call on a lookup': `{{ o.k(${JSON.stringify(code)}) }}`,
};

describe('api templates: hostile templates cannot run code', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, template] of Object.entries({ ...REVIEW_PAYLOADS, ...CLASSIC_ESCAPES }))
    it(`${name}: refused or rendered as data, nothing ran`, () => {
      const result = render(template);
      if (result.ok) expect(result.output).not.to.match(/uid=|function|\[native code\]/);
      else expect(result.code).to.be.oneOf(['invalid_template_syntax', 'template_render_failed']);
      expectUntouched();
    });

  it("the review's payloads are refused when the template is created (400 invalid_template_syntax)", () => {
    for (const template of Object.values(REVIEW_PAYLOADS).slice(0, 2))
      expect(runJob({ kind: 'check', templateContent: template, parametersSchema: '{}' })).to.include({
        ok: false,
        code: 'invalid_template_syntax',
      });
  });

  it('generated templates with hostile text in every literal and name position run nothing (property)', () => {
    const hostile = fc.oneof(
      fc.constantFrom(
        code,
        `")&&${code}||("`,
        `');${code};('`,
        '`${' + code + '}`',
        '\\',
        '\\"',
        '*/',
        '\u2028',
        '__proto__',
        'constructor',
      ),
      fc.string({ maxLength: 12 }),
    );
    const name = fc.constantFrom(
      'x',
      's',
      'o',
      'xs',
      'constructor',
      '__proto__',
      'range',
      'cycler',
      'joiner',
      'lipsum',
      'process',
      'globalThis',
      'require',
      'env',
      'context',
      'frame',
      'runtime',
      'toString',
    );
    const quoted = hostile.map((text) => JSON.stringify(text));
    const single = hostile.map((text) => `'${text.replace(/'/g, '')}'`);
    const literal = fc.oneof(quoted, single);
    const template = fc.oneof(
      fc.tuple(literal).map(([l]) => `{{ ${l} }}`),
      fc.tuple(literal).map(([l]) => `{{ 1 is ${l} }}`),
      fc.tuple(literal).map(([l]) => `{% set ${l} = 1 %}`),
      fc.tuple(name, literal).map(([n, l]) => `{{ ${n}(${l}) }}`),
      fc.tuple(name, literal).map(([n, l]) => `{{ x | ${n}(${l}) }}`),
      fc.tuple(name, literal).map(([n, l]) => `{{ ${n}[${l}] }}{{ ${n}.${n} }}`),
      fc.tuple(literal, literal).map(([k, v]) => `{{ {${k}: ${v}} }}`),
      fc.tuple(name, literal).map(([n, l]) => `{% for ${n} in [${l}] %}{{ ${n} }}{% endfor %}`),
      fc.tuple(literal, literal).map(([a, b]) => `{{ ${a} ~ ${b} }}{{ ${a} in ${b} }}{{ ${a} == ${b} }}`),
      fc.tuple(name, literal).map(([n, l]) => `{{ ${n}(${l})(${l}) }}{{ (${n})(${l}) }}`),
      fc.tuple(name, literal).map(([n, l]) => `{{ x is ${n}(${l}) }}{% filter ${n} %}${l}{% endfilter %}`),
    );
    fc.assert(
      fc.property(template, (t) => {
        const result = render(t);
        expect(result.ok === true || typeof result.message === 'string').to.equal(true);
        expectUntouched();
      }),
      { numRuns: 500 },
    );
  });
});

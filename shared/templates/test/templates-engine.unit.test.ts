import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { repoRoot } from '@brokkr/infra';
import { runJob, type JobResult } from '../src/jobs.ts';

/**
 * One case per row of docs/compatibility.md "Template engine (Tera compatibility)": what the
 * row says is supported renders as Tera would; what it says is not is refused the way it says.
 * The engine runs in-process here (the api runs it on worker threads; templates-api.test.ts
 * covers that path).
 */

type Expect =
  | { output: string }
  | { error: JobResult extends infer R ? (R extends { ok: false; code: infer C } ? C : never) : never; contains?: string };
interface Case {
  template: string;
  params?: Record<string, unknown>;
  expect: Expect;
}

const ok = (output: string) => ({ output });

const CASES: Record<string, Case[]> = {
  variables: [{ template: 'name: {{ name }}', params: { name: 'web' }, expect: ok('name: web') }],
  'strict-undefined': [
    { template: '{{ image }}', expect: { error: 'template_render_failed', contains: 'Variable `image` not found' } },
    { template: '{{ db.host }}', params: { db: {} }, expect: { error: 'template_render_failed', contains: 'db.host' } },
    { template: '{{ missing | upper }}', expect: { error: 'template_render_failed', contains: 'missing' } },
    { template: '{% for x in missing %}{% endfor %}', expect: { error: 'template_render_failed', contains: 'missing' } },
  ],
  'dot-and-brackets': [
    { template: '{{ a.b }} {{ a["b"] }} {{ a[k] }}', params: { a: { b: 1 }, k: 'b' }, expect: ok('1 1 1') },
    { template: '{{ a.constructor }}', params: { a: {} }, expect: { error: 'template_render_failed', contains: 'a.constructor' } },
    { template: '{{ xs.length }}', params: { xs: [1] }, expect: { error: 'template_render_failed' } },
  ],
  'index-notation': [{ template: '{{ xs.1 }} {{ m.xs.0 }}', params: { xs: [1, 2], m: { xs: ['a'] } }, expect: ok('2 a') }],
  default: [
    { template: '{{ x | default(value="y") }}|{{ n | default(value=1) }}', expect: ok('y|1') },
    {
      template: '{{ e | default(value="y") }}|{{ z | default(value=1) }}|{{ u | default(value="d") }}|',
      params: { e: '', z: 0, u: null },
      expect: ok('|0||'),
    },
    { template: '{{ a.b | default(value="x") }}', params: { a: {} }, expect: ok('x') },
  ],
  'if-elif-else': [
    { template: '{% if a %}A{% elif b %}B{% else %}C{% endif %}', params: { b: true }, expect: ok('B') },
    { template: '{% if nope %}yes{% else %}no{% endif %}', expect: ok('no') },
  ],
  truthiness: [
    {
      template: '{% for v in vals %}{% if v %}T{% else %}F{% endif %}{% endfor %} {{ not [] }} {{ [] or "x" }}',
      params: { vals: [false, 0, '', [], {}, null, 1, 'a', [0], { k: 1 }] },
      expect: ok('FFFFFFTTTT true true'),
    },
  ],
  'for-loops': [
    {
      template: '{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }};{% endfor %}',
      params: { xs: ['a', 'b'] },
      expect: ok('10truefalse;21falsetrue;'),
    },
    { template: '{% for k, v in o %}{{ k }}={{ v }} {% endfor %}', params: { o: { b: 2, a: 1, c: 3 } }, expect: ok('a=1 b=2 c=3 ') },
    { template: '{% for c in s %}[{{ c }}]{% endfor %}', params: { s: 'ab' }, expect: ok('[a][b]') },
    { template: '{% for x in xs %}{{ x }}{% else %}empty{% endfor %}', params: { xs: [] }, expect: ok('empty') },
  ],
  'set-global': [
    {
      template: '{% set n = 0 %}{% for x in xs %}{% set_global n = n + x %}{% endfor %}{{ n }}',
      params: { xs: [1, 2, 3] },
      expect: ok('6'),
    },
  ],
  'whitespace-control': [{ template: 'a\n  {%- if true -%}\n  b\n  {%- endif %}\n{{- " c" -}}  \n', expect: ok('ab c') }],
  'comments-and-raw': [{ template: 'a{# hidden #}b{% raw %}{{ x }}{% endraw %}', expect: ok('ab{{ x }}') }],
  'math-and-comparisons': [
    {
      template: '{{ 1 + 2 * 3 }} {{ 10 / 4 }} {{ 7 % 3 }} {{ 3 > 2 and 1 == 1 }} {{ 2 <= 1 or not true }}',
      expect: ok('7 2.5 1 true false'),
    },
  ],
  concatenation: [{ template: '{{ "a" ~ n ~ xs }}', params: { n: 1, xs: [1, 'b'] }, expect: ok('a1[1, b]') }],
  'in-operator': [
    {
      template: '{{ 2 in xs }} {{ "ell" in s }} {{ "k" in o }} {{ "constructor" in o }} {{ 5 not in xs }}',
      params: { xs: [1, 2], s: 'hello', o: { k: 1 } },
      expect: ok('true true true false true'),
    },
  ],
  'backtick-strings': [{ template: '{{ `tick` ~ "s" }}', expect: ok('ticks') }],
  'filter-sections': [{ template: '{% filter upper %}hello {{ n }}{% endfilter %}', params: { n: 'you' }, expect: ok('HELLO YOU') }],
  printing: [
    {
      template: '[{{ n }}] {{ xs }} {{ o }} {{ t }}',
      params: { n: null, xs: ['a', 1, [true]], o: { a: 1 }, t: false },
      expect: ok('[] [a, 1, [true]] [object] false'),
    },
  ],
  'string-filters': [
    {
      template:
        '{{ s | lower }}|{{ s | upper }}|{{ "hELLO" | capitalize }}|{{ "foo  bar" | title }}|{{ "a b  c" | wordcount }}|{{ "  x " | trim }}|' +
        '{{ "  x" | trim_start }}|{{ "x  " | trim_end }}|{{ "//a//" | trim_start_matches(pat="//") }}|{{ "//a//" | trim_end_matches(pat="//") }}|' +
        '{{ s | replace(from="b", to="B") }}|{{ "I\'m" | addslashes }}|{{ "-Hello World! " | slugify }}|{{ "abcdef" | truncate(length=3) }}|' +
        '{{ "a\nb" | linebreaksbr }}|{{ "<p>\n <a>" | spaceless }}|{{ "<b>x</b>" | striptags }}|{{ "a/b" | split(pat="/") }}|' +
        '{{ "/a b?c" | urlencode }}|{{ "/a" | urlencode_strict }}|{{ "<&>" | escape }}|{{ "\'" | escape_xml }}|{{ "s" | safe }}|{{ 5 | as_str }}',
      params: { s: 'Ab c' },
      expect: ok(
        "ab c|AB C|Hello|Foo  Bar|3|x|x|x|a//|//a|AB c|I\\'m|hello-world|abc…|a<br>b|<p><a>|x|[a, b]|/a%20b%3Fc|%2Fa|&lt;&amp;&gt;|&apos;|s|5",
      ),
    },
  ],
  'number-filters': [
    {
      template:
        '{{ "42" | int }} {{ "0x1F" | int(base=16) }} {{ "x" | int(default=7) }} {{ "2.5" | float }} {{ 2.345 | round(precision=2) }} {{ 2.1 | round(method="ceil") }} {{ -3 | abs }} {{ n }} item{{ n | pluralize }} {{ 1 }} categor{{ 1 | pluralize(singular="y", plural="ies") }}',
      params: { n: 2 },
      expect: ok('42 31 7 2.5 2.35 3 3 2 items 1 category'),
    },
  ],
  'collection-filters': [
    {
      template:
        '{{ xs | first }} {{ xs | last }} {{ xs | nth(n=1) }} {{ xs | join(sep="-") }} {{ xs | length }} {{ xs | reverse }} {{ [3, 1, 2] | sort }} ' +
        '{{ ps | sort(attribute="age") | map(attribute="name") }} {{ ["A", "a", "b"] | unique }} {{ xs | slice(start=1, end=-1) }} ' +
        '{{ ps | filter(attribute="age", value=30) | map(attribute="name") }} {{ xs | concat(with="z") }} {{ o | get(key="k-1") }} {{ o | get(key="no", default="d") }} ' +
        '{% for g, items in ps | group_by(attribute="age") %}{{ g }}:{{ items | length }};{% endfor %} {{ o | json_encode() }}',
      params: {
        xs: ['a', 'b', 'c', 'd'],
        ps: [
          { name: 'x', age: 30 },
          { name: 'y', age: 20 },
          { name: 'w', age: 30 },
        ],
        o: { 'k-1': 1, b: [2] },
      },
      expect: ok('a d b a-b-c-d 4 [d, c, b, a] [1, 2, 3] [y, x, w] [A, b] [b, c] [x, w] [a, b, c, d, z] 1 d 20:1;30:2; {"b":[2],"k-1":1}'),
    },
    { template: '{{ o | json_encode(pretty=true) }}', params: { o: { a: 1 } }, expect: ok('{\n  "a": 1\n}') },
  ],
  tests: [
    {
      template:
        '{{ x is defined }} {{ y is undefined }} {{ 3 is odd }} {{ 4 is even }} {{ "s" is string }} {{ 1 is number }} {{ 9 is divisibleby(3) }} ' +
        '{{ xs is iterable }} {{ o is object }} {{ "abc" is starting_with("ab") }} {{ "abc" is ending_with("bc") }} {{ xs is containing(2) }} {{ "abc" is matching("^a.c$") }}',
      params: { x: 1, xs: [1, 2], o: {} },
      expect: ok('true true true true true true true true true true true true true'),
    },
  ],
  functions: [
    { template: '{{ range(end=3) }} {{ range(start=1, end=10, step_by=4) }}', expect: ok('[0, 1, 2] [1, 5, 9]') },
    { template: '{{ range(end=1000000) | length }}', expect: { error: 'template_render_failed', contains: 'over the limit' } },
    { template: '{{ throw(message="stop here") }}', expect: { error: 'template_render_failed', contains: 'stop here' } },
    {
      template: '{% set r = get_random(start=5, end=6) %}{{ r }} {{ now(timestamp=true) > 1700000000 }} {{ now() | length > 18 }}',
      expect: ok('5 true true'),
    },
  ],
  'positional-arguments': [{ template: '{{ xs | join(", ") }} {{ x | default("d") }}', params: { xs: [1, 2] }, expect: ok('1, 2 d') }],
  'unknown-names': [
    { template: '{{ x | shout }}', expect: { error: 'invalid_template_syntax', contains: 'Filter `shout` does not exist' } },
    { template: '{% if x is big %}{% endif %}', expect: { error: 'invalid_template_syntax', contains: 'Test `big`' } },
    { template: '{{ url_for(name="x") }}', expect: { error: 'invalid_template_syntax', contains: 'Function `url_for`' } },
  ],
  'get-env': [
    { template: '{{ get_env(name="DATABASE_URL", default="") }}', expect: { error: 'invalid_template_syntax', contains: 'get_env' } },
  ],
  'includes-and-macros': [
    { template: '{% include "x.yaml" %}', expect: { error: 'invalid_template_syntax', contains: 'include' } },
    { template: '{% extends "base" %}', expect: { error: 'invalid_template_syntax', contains: 'extends' } },
    { template: '{% import "m" as m %}', expect: { error: 'invalid_template_syntax', contains: 'import' } },
    { template: '{% macro m() %}x{% endmacro %}', expect: { error: 'invalid_template_syntax', contains: 'macro' } },
  ],
  'break-continue': [{ template: '{% for x in xs %}{% break %}{% endfor %}', expect: { error: 'invalid_template_syntax' } }],
  'date-filters': [
    { template: '{{ ts | date }}', expect: { error: 'invalid_template_syntax', contains: 'date' } },
    { template: '{{ n | filesizeformat }}', expect: { error: 'invalid_template_syntax', contains: 'filesizeformat' } },
  ],
  'float-printing': [{ template: '{{ f }} {{ 2.5 * 2 }}', params: { f: 76.0 }, expect: ok('76 5') }],
  'loop-scoped-set': [{ template: '{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}', expect: ok('2') }],
  'value-limits': [
    {
      template: '{% set xs = [1] %}{% for i in range(end=40) %}{% set xs = xs | concat(with=xs) %}{% endfor %}{{ xs | length }}',
      expect: { error: 'template_render_failed', contains: 'exceeds the limit of 100000' },
    },
    {
      template: '{% set s = "ab" %}{% for i in range(end=40) %}{% set s = s ~ s %}{% endfor %}{{ s | length }}',
      expect: { error: 'template_render_failed', contains: 'exceeds the limit' },
    },
    {
      template: '{% set xs = [1] %}{% for i in range(end=60) %}{% set xs = [xs, xs] %}{% endfor %}{{ xs | json_encode() }}',
      expect: { error: 'template_render_failed', contains: 'longer than the limit' },
    },
    {
      template: '{% set xs = [1] %}{% for i in range(end=60) %}{% set xs = [xs, xs] %}{% endfor %}{{ xs }}',
      expect: { error: 'template_render_failed', contains: 'longer than the limit' },
    },
  ],
  'tera-context': [{ template: '{{ __tera_context }}', expect: { error: 'template_render_failed', contains: '__tera_context' } }],
};

function documentedFeatures(): string[] {
  const doc = readFileSync(path.join(repoRoot, 'docs/compatibility.md'), 'utf8');
  const section = /^## Template engine \(Tera compatibility\)\n([\s\S]*?)^## /m.exec(doc)?.[1] ?? '';
  return [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]!);
}

describe('template engine: Tera compatibility (docs/compatibility.md)', () => {
  it('has a case for every documented row and a row for every case', () => {
    const documented = documentedFeatures();
    expect(documented.length).to.be.greaterThan(20);
    expect(Object.keys(CASES).sort()).to.deep.equal([...documented].sort());
  });

  for (const [feature, cases] of Object.entries(CASES)) {
    it(feature, () => {
      for (const c of cases) {
        const result = runJob({
          kind: 'render',
          templateContent: c.template,
          parametersSchema: '{}',
          parameters: c.params ?? {},
          maxOutputChars: 100_000,
        });
        if ('output' in c.expect) {
          expect(result, c.template).to.deep.equal({ ok: true, output: c.expect.output });
        } else {
          expect(result.ok, c.template).to.equal(false);
          if (result.ok) continue;
          expect(result.code, c.template).to.equal(c.expect.error);
          if (c.expect.contains) expect(result.message, c.template).to.contain(c.expect.contains);
        }
      }
    });
  }
});

import { childrenOf, pathOf, symbolName } from './ast.ts';
import { evaluate, type Library } from './expressions.ts';
import type { AstNode } from './nunjucks-internals.ts';
import type { Scope } from './scope.ts';
import { Missing, TemplateRenderError, isPlainObject, printed, truthy } from './values.ts';

/**
 * Runs a checked template tree (ast.ts `checkTemplate`): text, `{{ }}` output, `if`, `for`,
 * `set` and captured blocks (`{% set x %}…{% endset %}`, `{% filter %}`). Every piece of text
 * is charged to the render's output budget before it is kept, captured text included.
 */

type Runner = (node: AstNode, scope: Scope, out: string[], lib: Library) => void;

export function run(node: AstNode, scope: Scope, out: string[], lib: Library): void {
  const runner = RUNNERS[node.typename];
  if (runner) runner(node, scope, out, lib);
  else evaluate(node, scope, lib);
}

/** The text a block renders, returned instead of written. */
export function renderBlock(node: AstNode, scope: Scope, lib: Library): string {
  const parts: string[] = [];
  run(node.typename === 'Capture' ? (node.body as AstNode) : node, scope, parts, lib);
  return parts.join('');
}

const runAll: Runner = (node, scope, out, lib) => {
  for (const child of childrenOf(node)) run(child, scope, out, lib);
};

const output: Runner = (node, scope, out, lib) => {
  for (const child of childrenOf(node))
    out.push(lib.spend(child.typename === 'TemplateData' ? String(child.value) : printed(evaluate(child, scope, lib))));
};

const ifTag: Runner = (node, scope, out, lib) => {
  if (truthy(evaluate(node.cond as AstNode, scope, lib))) run(node.body as AstNode, scope, out, lib);
  else if (node.else_) run(node.else_ as AstNode, scope, out, lib);
};

/** What a loop walks over: an array, a string's characters, or an object's sorted entries. */
function iterable(value: unknown, names: number, path: string): unknown[] {
  if (value instanceof Missing) throw new Missing(path).error();
  if (Array.isArray(value)) return value;
  if (typeof value === 'string' && names === 1) return [...value];
  if (isPlainObject(value) && names === 2)
    return Object.keys(value)
      .sort()
      .map((k) => [k, value[k]]);
  if (isPlainObject(value))
    throw new TemplateRenderError(`Iterating over the object \`${path}\` needs two names: {% for key, value in ${path} %}`);
  throw new TemplateRenderError(`\`${path}\` cannot be iterated over`);
}

function loopVariable(index: number, length: number): Record<string, unknown> {
  return {
    index: index + 1,
    index0: index,
    revindex: length - index,
    revindex0: length - index - 1,
    first: index === 0,
    last: index === length - 1,
    length,
  };
}

/** Binds one item to the loop's name, or a `[key, value]` pair (or two-item list) to its two names. */
function bindItem(scope: Scope, names: string[], item: unknown): void {
  if (names.length === 1) return scope.bind(names[0]!, item);
  const pair = Array.isArray(item) ? item : [];
  names.forEach((name, i) => scope.bind(name, i < pair.length ? pair[i] : new Missing(name)));
}

const forTag: Runner = (node, scope, out, lib) => {
  const nameNode = node.name as AstNode;
  const names = (nameNode.typename === 'Array' ? childrenOf(nameNode) : [nameNode]).map((n) => symbolName(n)!);
  const items = iterable(evaluate(node.arr as AstNode, scope, lib), names.length, pathOf(node.arr as AstNode));
  // One scope for the whole loop: a `set` inside it persists from one iteration to the next.
  const inner = scope.child();
  items.forEach((item, index) => {
    bindItem(inner, names, item);
    inner.bind('loop', loopVariable(index, items.length));
    run(node.body as AstNode, inner, out, lib);
  });
  if (items.length === 0 && node.else_) run(node.else_ as AstNode, scope, out, lib);
};

const setTag: Runner = (node, scope, _out, lib) => {
  const value = node.value ? evaluate(node.value as AstNode, scope, lib) : renderBlock(node.body as AstNode, scope, lib);
  for (const target of node.targets as AstNode[]) scope.assign(symbolName(target)!, value);
};

const RUNNERS: Record<string, Runner> = {
  Root: runAll,
  NodeList: runAll,
  Output: output,
  If: ifTag,
  For: forTag,
  Set: setTag,
};

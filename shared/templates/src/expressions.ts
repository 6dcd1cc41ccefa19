import { CallArgs } from './args.ts';
import { childrenOf, pathOf, symbolName, testName } from './ast.ts';
import type { AstNode } from './nunjucks-internals.ts';
import type { Scope } from './scope.ts';
import type { FilterBody } from './string-filters.ts';
import { Missing, TemplateRenderError, isPlainObject, present, printed, truthy } from './values.ts';

/**
 * Expressions, evaluated straight from the checked tree (ast.ts `checkTemplate`): no code is
 * generated, so nothing a template spells — a name, a string, a key — is ever read as
 * JavaScript. The only callables are the library's filters, tests and functions, looked up by
 * name in maps that hold nothing else; values are the parameters' data and what the library
 * returns (strings, numbers, booleans, null, arrays and plain objects).
 */

export interface Library {
  filters: ReadonlyMap<string, FilterBody>;
  tests: ReadonlyMap<string, (value: unknown, args: CallArgs) => boolean>;
  functions: ReadonlyMap<string, (args: CallArgs) => unknown>;
  /** Bounds a value a filter or an operator built (length of a string, items of a list). */
  bounded<T>(value: T): T;
  /** Charges text to the render's output budget and returns it. */
  spend(text: string): string;
  /** Renders a block to text: `{% filter upper %}…{% endfilter %}` filters a Capture. */
  renderBlock(node: AstNode, scope: Scope): string;
}

type Evaluator = (node: AstNode, scope: Scope, lib: Library) => unknown;

export function evaluate(node: AstNode, scope: Scope, lib: Library): unknown {
  const evaluator = EVALUATORS[node.typename];
  // checkTemplate refused every other node; reaching this is a bug, not client input.
  if (!evaluator) throw new Error(`no evaluator for ${node.typename}`);
  return evaluator(node, scope, lib);
}

const left = (node: AstNode, scope: Scope, lib: Library) => evaluate(node.left as AstNode, scope, lib);
const right = (node: AstNode, scope: Scope, lib: Library) => evaluate(node.right as AstNode, scope, lib);
const target = (node: AstNode, scope: Scope, lib: Library) => evaluate(node.target as AstNode, scope, lib);

function number(value: unknown, operator: string): number {
  const v = present(value);
  if (typeof v !== 'number') throw new TemplateRenderError(`\`${operator}\` needs numbers; use \`~\` to join strings`);
  return v;
}

function arithmetic(operator: string, apply: (a: number, b: number) => number): Evaluator {
  return (node, scope, lib) => {
    const a = number(left(node, scope, lib), operator);
    const b = number(right(node, scope, lib), operator);
    if ((operator === '/' || operator === '%' || operator === '//') && b === 0) throw new TemplateRenderError(`\`${operator}\` by zero`);
    return apply(a, b);
  };
}

/** Tera's `==`: values are equal when their data is (arrays and objects compared item by item). */
export function sameValue(a: unknown, b: unknown): boolean {
  const [x, y] = [present(a), present(b)];
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((item, i) => sameValue(item, y[i]));
  if (isPlainObject(x) && isPlainObject(y)) {
    const keys = Object.keys(x);
    return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && sameValue(x[k], y[k]));
  }
  return x === y;
}

function ordered(a: unknown, b: unknown, operator: string): [number, number] | [string, string] {
  const [x, y] = [present(a), present(b)];
  if (typeof x === 'number' && typeof y === 'number') return [x, y];
  if (typeof x === 'string' && typeof y === 'string') return [x, y];
  throw new TemplateRenderError(`\`${operator}\` compares two numbers or two strings`);
}

const COMPARISONS: Record<string, (a: unknown, b: unknown, op: string) => boolean> = {
  '==': sameValue,
  '===': sameValue,
  '!=': (a, b) => !sameValue(a, b),
  '!==': (a, b) => !sameValue(a, b),
  '<': (a, b, op) => ((ab) => ab[0] < ab[1])(ordered(a, b, op)),
  '>': (a, b, op) => ((ab) => ab[0] > ab[1])(ordered(a, b, op)),
  '<=': (a, b, op) => ((ab) => ab[0] <= ab[1])(ordered(a, b, op)),
  '>=': (a, b, op) => ((ab) => ab[0] >= ab[1])(ordered(a, b, op)),
};

/** `a < b < c` holds when each pair does (Python's and Jinja's chaining). */
function compare(node: AstNode, scope: Scope, lib: Library): boolean {
  let current = evaluate(node.expr as AstNode, scope, lib);
  for (const op of node.ops as AstNode[]) {
    const next = evaluate(op.expr as AstNode, scope, lib);
    const holds = COMPARISONS[String(op.type)];
    if (!holds) throw new TemplateRenderError(`Unknown comparison \`${String(op.type)}\``);
    if (!holds(current, next, String(op.type))) return false;
    current = next;
  }
  return true;
}

/** Tera's `in`: a member of an array, a substring, or a key of an object (own keys only). */
export function contains(needle: unknown, haystack: unknown): boolean {
  const [n, h] = [present(needle), present(haystack)];
  if (Array.isArray(h)) return h.some((item) => sameValue(item, n));
  if (typeof h === 'string') return typeof n === 'string' && h.includes(n);
  if (isPlainObject(h)) return typeof n === 'string' && Object.hasOwn(h, n);
  throw new TemplateRenderError('`in` needs an array, a string or an object on its right');
}

/** `a.b`, `a["b"]`, `xs[0]`: only the parameters' own data, never a JavaScript property. */
export function member(container: unknown, key: unknown, path: string): unknown {
  if (Array.isArray(container)) {
    const index = arrayIndex(key);
    return index < container.length ? container[index] : new Missing(path);
  }
  const name = typeof key === 'number' ? String(key) : key;
  if (isPlainObject(container) && typeof name === 'string' && Object.hasOwn(container, name)) return container[name];
  return new Missing(path);
}

/** The index `key` names (a whole number, or its digits); Infinity (no item) for anything else. */
function arrayIndex(key: unknown): number {
  const index = typeof key === 'number' ? key : typeof key === 'string' && /^\d+$/.test(key) ? Number(key) : -1;
  return Number.isInteger(index) && index >= 0 ? index : Number.POSITIVE_INFINITY;
}

/** An object built by the template: keys become own data properties (`__proto__` included). */
function dict(node: AstNode, scope: Scope, lib: Library): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const pair of childrenOf(node)) {
    const key = symbolName(pair.key) ?? String((pair.key as AstNode).value);
    const value = evaluate(pair.value as AstNode, scope, lib);
    Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

/** A call's arguments: positional values, then `name=value` pairs (the parser's KeywordArgs). */
function callArgs(callee: string, args: AstNode[], scope: Scope, lib: Library): CallArgs {
  const positional: unknown[] = [];
  const keywords = new Map<string, unknown>();
  for (const arg of args) {
    if (arg.typename !== 'KeywordArgs') positional.push(evaluate(arg, scope, lib));
    else
      for (const pair of childrenOf(arg))
        keywords.set(symbolName(pair.key) ?? String((pair.key as AstNode).value), evaluate(pair.value as AstNode, scope, lib));
  }
  return CallArgs.of(callee, positional, keywords);
}

function filter(node: AstNode, scope: Scope, lib: Library): unknown {
  const name = symbolName(node.name)!;
  const [subject, ...args] = childrenOf(node.args as AstNode);
  const value = evaluate(subject!, scope, lib);
  const body = lib.filters.get(name)!;
  return lib.bounded(body(name === 'default' ? value : present(value), callArgs(name, args, scope, lib)));
}

function test(node: AstNode, scope: Scope, lib: Library): boolean {
  const name = testName(node)!;
  const call = node.right as AstNode;
  const args = call.typename === 'FunCall' ? childrenOf(call.args as AstNode) : [];
  const value = left(node, scope, lib);
  const body = lib.tests.get(name)!;
  return body(name.endsWith('defined') ? value : present(value), callArgs(name, args, scope, lib)) === true;
}

function call(node: AstNode, scope: Scope, lib: Library): unknown {
  const name = symbolName(node.name)!;
  return lib.bounded(lib.functions.get(name)!(callArgs(name, childrenOf(node.args as AstNode), scope, lib)));
}

const EVALUATORS: Record<string, Evaluator> = {
  Literal: (node) => node.value,
  Capture: (node, scope, lib) => lib.renderBlock(node, scope),
  Symbol: (node, scope) => scope.lookup(String(node.value)),
  Group: (node, scope, lib) => childrenOf(node).reduce<unknown>((_last, child) => evaluate(child, scope, lib), null),
  Array: (node, scope, lib) => lib.bounded(childrenOf(node).map((child) => evaluate(child, scope, lib))),
  Dict: dict,
  LookupVal: (node, scope, lib) => member(target(node, scope, lib), evaluate(node.val as AstNode, scope, lib), pathOf(node)),
  InlineIf: (node, scope, lib) =>
    truthy(evaluate(node.cond as AstNode, scope, lib))
      ? evaluate(node.body as AstNode, scope, lib)
      : node.else_
        ? evaluate(node.else_ as AstNode, scope, lib)
        : '',
  FunCall: call,
  Filter: filter,
  Is: test,
  In: (node, scope, lib) => contains(left(node, scope, lib), right(node, scope, lib)),
  Not: (node, scope, lib) => !truthy(target(node, scope, lib)),
  And: (node, scope, lib) => truthy(left(node, scope, lib)) && truthy(right(node, scope, lib)),
  Or: (node, scope, lib) => truthy(left(node, scope, lib)) || truthy(right(node, scope, lib)),
  Compare: compare,
  Concat: (node, scope, lib) => lib.bounded(printed(left(node, scope, lib)) + printed(right(node, scope, lib))),
  Add: arithmetic('+', (a, b) => a + b),
  Sub: arithmetic('-', (a, b) => a - b),
  Mul: arithmetic('*', (a, b) => a * b),
  Div: arithmetic('/', (a, b) => a / b),
  FloorDiv: arithmetic('//', (a, b) => Math.floor(a / b)),
  Mod: arithmetic('%', (a, b) => a % b),
  Pow: arithmetic('**', (a, b) => a ** b),
  Neg: (node, scope, lib) => -number(target(node, scope, lib), '-'),
  Pos: (node, scope, lib) => number(target(node, scope, lib), '+'),
};

import type { AstNode } from './nunjucks-internals.ts';

/** The template cannot be accepted: 400 `invalid_template_syntax`. */
export class TemplateSyntaxError extends Error {
  override name = 'TemplateSyntaxError';
}

/**
 * Tags refused with a message of their own. Brokkr renders one template with no loader, so
 * Tera could never resolve the first ones either.
 */
const REFUSED: Record<string, string> = {
  Include: '`include` is not available: a template is rendered on its own',
  Extends: '`extends` is not available: a template is rendered on its own',
  Import: '`import` is not available: a template is rendered on its own',
  FromImport: '`from … import` is not available: a template is rendered on its own',
  Macro: '`macro` is not available (Tera macros live in separate files, which templates do not have)',
  Caller: '`call` is not available',
  Block: '`block` is not available: a template is rendered on its own',
  Switch: '`switch` is not a Tera tag',
};

/**
 * Every node the interpreter evaluates. Anything else the parser can produce (asynchronous
 * tags, extension calls, `super`) is refused: the list is what is allowed, not what is
 * forbidden, so a node a future nunjucks parser adds cannot slip through.
 */
const EVALUATED = new Set([
  ...['Root', 'NodeList', 'Output', 'TemplateData', 'If', 'For', 'Set', 'Capture'],
  ...['Literal', 'Symbol', 'Group', 'Array', 'Dict', 'Pair', 'KeywordArgs', 'LookupVal', 'InlineIf'],
  ...['FunCall', 'Filter', 'Is', 'In', 'Not', 'And', 'Or', 'Compare', 'CompareOperand'],
  ...['Add', 'Concat', 'Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos'],
]);

export interface KnownNames {
  filters: ReadonlySet<string>;
  tests: ReadonlySet<string>;
  functions: ReadonlySet<string>;
}

export function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && 'typename' in value;
}

export function childrenOf(node: AstNode): AstNode[] {
  const values = node.children ?? node.fields.map((f) => node[f]);
  return values.filter(isNode);
}

export const at = (node: AstNode) => `line ${node.lineno + 1}, column ${node.colno + 1}`;

/** The name a node spells when it is a plain symbol (`upper`, `range`), else undefined. */
export const symbolName = (node: unknown): string | undefined =>
  isNode(node) && node.typename === 'Symbol' && typeof node.value === 'string' ? node.value : undefined;

/**
 * Refuses what the interpreter does not evaluate, unknown filters, tests and functions, and
 * names or keys that are not plain symbols or strings — with where they are. After this the
 * interpreter can trust the tree's shape.
 */
export function checkTemplate(root: AstNode, known: KnownNames): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const refused = REFUSED[node.typename];
    if (refused) throw new TemplateSyntaxError(`${refused} (${at(node)})`);
    if (!EVALUATED.has(node.typename)) throw new TemplateSyntaxError(`\`${node.typename}\` is not available (${at(node)})`);
    checkShape(node, known);
    stack.push(...childrenToCheck(node));
  }
}

/** A test's own call (`is divisibleby(3)`) is not a function call: only its arguments are checked. */
function childrenToCheck(node: AstNode): AstNode[] {
  if (node.typename !== 'Is') return childrenOf(node);
  const right = node.right as AstNode;
  return [node.left as AstNode, ...(right.typename === 'FunCall' ? childrenOf(right.args as AstNode) : [])];
}

function checkShape(node: AstNode, known: KnownNames): void {
  switch (node.typename) {
    case 'Filter':
      return requireName(node, symbolName(node.name), known.filters, 'Filter');
    case 'Is':
      return requireName(node, testName(node), known.tests, 'Test');
    case 'FunCall':
      return checkFunctionName(node, symbolName(node.name), known);
    case 'Set':
      return checkSetTargets(node);
    case 'For':
      return checkLoopNames(node);
    case 'Pair':
      if (symbolName(node.key) === undefined && !isStringLiteral(node.key))
        throw new TemplateSyntaxError(`An object key is a name or a string (${at(node)})`);
      return;
    case 'Literal':
      if (node.value instanceof RegExp) throw new TemplateSyntaxError(`Regular expression literals are not Tera (${at(node)})`);
      return;
  }
}

function checkSetTargets(node: AstNode): void {
  for (const target of node.targets as AstNode[])
    if (symbolName(target) === undefined) throw new TemplateSyntaxError(`\`set\` assigns to a name (${at(node)})`);
}

const isStringLiteral = (node: unknown) => isNode(node) && node.typename === 'Literal' && typeof node.value === 'string';

/** `x is odd` or `x is divisibleby(3)`: the test's name, undefined when it is not a plain name. */
export function testName(node: AstNode): string | undefined {
  const right = node.right as AstNode;
  return symbolName(right) ?? (right.typename === 'FunCall' ? symbolName(right.name) : undefined);
}

function requireName(node: AstNode, name: string | undefined, known: ReadonlySet<string>, kind: string): void {
  if (name === undefined) throw new TemplateSyntaxError(`${kind} names are plain names (${at(node)})`);
  if (!known.has(name)) throw new TemplateSyntaxError(`${kind} \`${name}\` does not exist (${at(node)})`);
}

function checkFunctionName(node: AstNode, name: string | undefined, known: KnownNames): void {
  if (name === 'get_env')
    throw new TemplateSyntaxError(`Function \`get_env\` is not available: templates cannot read the server's environment (${at(node)})`);
  if (name === undefined) throw new TemplateSyntaxError(`Only Tera's functions can be called, by name (${at(node)})`);
  requireName(node, name, known.functions, 'Function');
}

function checkLoopNames(node: AstNode): void {
  const name = node.name as AstNode;
  const names = name.typename === 'Array' ? childrenOf(name) : [name];
  if (names.length > 2 || names.some((n) => symbolName(n) === undefined))
    throw new TemplateSyntaxError(`A loop binds one name, or two for key and value (${at(node)})`);
}

/** `a.b[0]` as Tera names it in errors. */
export function pathOf(node: AstNode): string {
  if (node.typename === 'Symbol') return String(node.value);
  if (node.typename === 'LookupVal') {
    const key = node.val as AstNode;
    return `${pathOf(node.target as AstNode)}.${key.typename === 'Literal' ? String(key.value) : '[…]'}`;
  }
  return '<expression>';
}

import { nodeClass, type AstNode } from './nunjucks-internals.ts';

/** The template cannot be accepted: 400 `invalid_template_syntax`. */
export class TemplateSyntaxError extends Error {
  override name = 'TemplateSyntaxError';
}

/** Names the rewritten AST calls; they live in the environment's globals. */
export const HELPERS = {
  truthy: '__tera_truthy',
  iterate: '__tera_iterate',
  member: '__tera_member',
  print: '__tera_print',
  text: '__tera_text',
  concat: '__tera_concat',
  contains: '__tera_in',
  add: '__tera_add',
} as const;

/**
 * Tags a template may not use. Brokkr renders one template with no loader, so Tera could never
 * resolve them either; here they are refused up front (they would read other templates or, in
 * nunjucks, run asynchronous code).
 */
const FORBIDDEN: Record<string, string> = {
  Include: '`include` is not available: a template is rendered on its own',
  Extends: '`extends` is not available: a template is rendered on its own',
  Import: '`import` is not available: a template is rendered on its own',
  FromImport: '`from … import` is not available: a template is rendered on its own',
  Macro: '`macro` is not available (Tera macros live in separate files, which templates do not have)',
  Caller: '`call` is not available',
  FilterAsync: 'asynchronous filters are not available',
  AsyncEach: '`asyncEach` is not available',
  AsyncAll: '`asyncAll` is not available',
  IfAsync: '`ifAsync` is not available',
  CallExtension: 'extension tags are not available',
  CallExtensionAsync: 'extension tags are not available',
  Switch: '`switch` is not a Tera tag',
};

export interface KnownNames {
  filters: ReadonlySet<string>;
  tests: ReadonlySet<string>;
  functions: ReadonlySet<string>;
}

function childrenOf(node: AstNode): AstNode[] {
  const values = node.children ?? node.fields.map((f) => node[f]);
  return values.filter((v): v is AstNode => typeof v === 'object' && v !== null && 'typename' in v);
}

const at = (node: AstNode) => `line ${node.lineno + 1}, column ${node.colno + 1}`;

/** Refuses forbidden tags and unknown filters, tests and functions, with where they are. */
export function checkTemplate(root: AstNode, known: KnownNames): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const forbidden = FORBIDDEN[node.typename];
    if (forbidden) throw new TemplateSyntaxError(`${forbidden} (${at(node)})`);
    checkName(node, known);
    // A test's own call (`is divisibleby(3)`) is not a function call: check its arguments only.
    const right = node.typename === 'Is' ? (node.right as AstNode) : undefined;
    if (right) stack.push(node.left as AstNode, ...(right.typename === 'FunCall' ? childrenOf(right.args as AstNode) : []));
    else stack.push(...childrenOf(node));
  }
}

function checkName(node: AstNode, known: KnownNames): void {
  const symbol = (n: unknown) => ((n as AstNode | undefined)?.typename === 'Symbol' ? String((n as AstNode).value) : undefined);
  if (node.typename === 'Filter') {
    const name = symbol(node.name);
    if (name && !known.filters.has(name)) throw new TemplateSyntaxError(`Filter \`${name}\` does not exist (${at(node)})`);
  } else if (node.typename === 'Is') {
    const right = node.right as AstNode;
    const name = symbol(right) ?? symbol(right.name);
    if (name && !known.tests.has(name)) throw new TemplateSyntaxError(`Test \`${name}\` does not exist (${at(node)})`);
  } else if (node.typename === 'FunCall') {
    const name = symbol(node.name);
    if (name === 'get_env')
      throw new TemplateSyntaxError(`Function \`get_env\` is not available: templates cannot read the server's environment (${at(node)})`);
    if (name && !known.functions.has(name)) throw new TemplateSyntaxError(`Function \`${name}\` does not exist (${at(node)})`);
  }
}

function call(helper: string, like: AstNode, args: AstNode[]): AstNode {
  const { lineno, colno } = like;
  const list = new (nodeClass('NodeList'))(lineno, colno, args);
  return new (nodeClass('FunCall'))(lineno, colno, new (nodeClass('Symbol'))(lineno, colno, helper), list);
}

const literal = (like: AstNode, value: unknown) => new (nodeClass('Literal'))(like.lineno, like.colno, value);

/** `a.b[0]` as Tera names it in errors. */
function pathOf(node: AstNode): string {
  if (node.typename === 'Symbol') return String(node.value);
  if (node.typename === 'LookupVal') {
    const key = node.val as AstNode;
    return `${pathOf(node.target as AstNode)}.${key.typename === 'Literal' ? String(key.value) : '[…]'}`;
  }
  return '<expression>';
}

/**
 * Rewrites the parsed template so that Tera's semantics apply: conditions and loops go through
 * Tera's truthiness and strictness, attribute lookups only see the parameters' own data, and
 * everything printed (text included, so the output budget sees it) goes through one helper.
 */
export function rewrite(node: AstNode): AstNode {
  // Names for error messages, taken before the children are rewritten.
  const path = node.typename === 'LookupVal' ? pathOf(node) : node.typename === 'For' ? pathOf(node.arr as AstNode) : '';
  if (node.children) node.children = node.children.map(rewrite);
  else for (const field of node.fields) if (isNode(node[field])) node[field] = rewrite(node[field]);
  return rewriteOne(node, path);
}

const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && 'typename' in v;

/** Operators whose JavaScript meaning differs from Tera's: a helper does them Tera's way. */
const OPERATOR_HELPERS: Record<string, string> = { Concat: HELPERS.concat, In: HELPERS.contains, Add: HELPERS.add };

function rewriteOne(node: AstNode, path: string): AstNode {
  const operator = OPERATOR_HELPERS[node.typename];
  if (operator) return call(operator, node, [node.left as AstNode, node.right as AstNode]);
  switch (node.typename) {
    case 'If':
    case 'InlineIf':
      node.cond = call(HELPERS.truthy, node, [node.cond as AstNode]);
      return node;
    case 'Not':
      node.target = call(HELPERS.truthy, node, [node.target as AstNode]);
      return node;
    case 'And':
    case 'Or':
      node.left = call(HELPERS.truthy, node, [node.left as AstNode]);
      node.right = call(HELPERS.truthy, node, [node.right as AstNode]);
      return node;
    case 'For': {
      const names = (node.name as AstNode).typename === 'Array' ? 2 : 1;
      node.arr = call(HELPERS.iterate, node, [node.arr as AstNode, literal(node, names), literal(node, path)]);
      return node;
    }
    case 'LookupVal':
      return call(HELPERS.member, node, [node.target as AstNode, node.val as AstNode, literal(node, path)]);
    case 'Output':
      node.children = node.children!.map((child) =>
        child.typename === 'TemplateData' ? call(HELPERS.text, child, [literal(child, child.value)]) : call(HELPERS.print, child, [child]),
      );
      return node;
    default:
      return node;
  }
}

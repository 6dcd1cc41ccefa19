import nunjucks from 'nunjucks';

/**
 * The parts of nunjucks the Tera engine builds on that its type definitions leave out: the
 * parser, the AST node classes and the compiler class (all exported by nunjucks itself; they
 * are how its own precompiler works). Typed here once, loosely, so the rest stays typed.
 */
export interface AstNode {
  typename: string;
  lineno: number;
  colno: number;
  fields: string[];
  children?: AstNode[];
  [field: string]: unknown;
}

export type NodeClass = new (lineno: number, colno: number, ...fields: unknown[]) => AstNode;

export interface CompileFrame {
  lookup(name: string): string | undefined | null;
}

export interface CompilerBase {
  _emit(code: string): void;
  _compileExpression(node: AstNode, frame: CompileFrame): void;
  compile(node: AstNode, frame: CompileFrame | null): void;
  getCode(): string;
}

interface Internals {
  parser: { parse(src: string, extensions: unknown[], opts: Record<string, unknown>): AstNode };
  nodes: Record<string, NodeClass>;
  compiler: { Compiler: new (name: string, throwOnUndefined: boolean) => CompilerBase };
}

export const internals = nunjucks as unknown as Internals;
export const nodeClass = (name: string): NodeClass => {
  const cls = internals.nodes[name];
  if (!cls) throw new Error(`nunjucks has no AST node ${name}`);
  return cls;
};

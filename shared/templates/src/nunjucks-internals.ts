import nunjucks from 'nunjucks';

/**
 * The one part of nunjucks the Tera engine uses: its parser, which turns template text into a
 * tree of plain nodes (exported by nunjucks itself, untyped). nunjucks' compiler and runtime are
 * not used: they generate JavaScript from the tree, and the engine evaluates the tree instead.
 */
export interface AstNode {
  typename: string;
  lineno: number;
  colno: number;
  fields: string[];
  children?: AstNode[];
  [field: string]: unknown;
}

interface Parser {
  parse(src: string, extensions: unknown[], opts: Record<string, unknown>): AstNode;
}

const parser = (nunjucks as unknown as { parser: Parser }).parser;

/** The template's tree; throws nunjucks' own error (with line and column) on a syntax error. */
export function parseTemplate(source: string): AstNode {
  return parser.parse(source, [], {});
}

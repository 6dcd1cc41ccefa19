import { TemplateSyntaxError, checkTemplate, type KnownNames } from './ast.ts';
import { collectionFilters } from './collection-filters.ts';
import type { Library } from './expressions.ts';
import { renderBlock, run } from './interpreter.ts';
import { parseTemplate, type AstNode } from './nunjucks-internals.ts';
import { preprocess } from './preprocess.ts';
import { Scope } from './scope.ts';
import { stringFilters, type FilterBody } from './string-filters.ts';
import { MAX_RANGE_ITEMS, teraFunctions, teraTests } from './tests-and-functions.ts';
import { Missing, TemplateRenderError, isPlainObject, textLimit } from './values.ts';

/**
 * Brokkr's templates are Tera. This engine parses them with nunjucks' parser (the same Jinja
 * family) and evaluates the tree itself (interpreter.ts, expressions.ts) with Tera's rules:
 * Tera's filters, tests and functions only (keyword arguments), strict variables, Tera's
 * truthiness and printing, no loaders (nothing outside the one template is reachable),
 * lookups limited to the parameters' own data, and an output budget. Nothing is compiled to
 * JavaScript, so no text in a template can become code (docs/adr/0032).
 */

const FILTERS: Record<string, FilterBody> = {
  ...stringFilters,
  ...collectionFilters,
  default: (value, args) => (value instanceof Missing ? args.required('value', 0) : value),
};

export const KNOWN_NAMES: KnownNames = {
  filters: new Set(Object.keys(FILTERS)),
  tests: new Set(Object.keys(teraTests)),
  functions: new Set(Object.keys(teraFunctions)),
};

/** State of the render in progress (one at a time: a renderer process renders sequentially). */
class RenderState {
  remaining = 0;
  limit = 0;

  start(limit: number): void {
    this.limit = limit;
    this.remaining = limit;
    textLimit.chars = limit;
  }

  /**
   * Values a filter or an operator builds are bounded too: a string no longer than the output
   * may be, a list no longer than `range` may build. Without this a template doubling a list
   * in a loop would run the renderer process out of heap instead of failing with a clear message.
   */
  bounded<T>(value: T): T {
    if (typeof value === 'string' && value.length > this.limit)
      throw new TemplateRenderError(`A value of ${value.length} characters exceeds the limit of ${this.limit}`);
    if (Array.isArray(value) && value.length > MAX_RANGE_ITEMS)
      throw new TemplateRenderError(`A list of ${value.length} items exceeds the limit of ${MAX_RANGE_ITEMS}`);
    return value;
  }

  spend(text: string): string {
    this.remaining -= text.length;
    if (this.remaining < 0) throw new TemplateRenderError(`The rendered output exceeds the limit of ${this.limit} characters`);
    return text;
  }
}

const tidy = (message: string) =>
  message
    .replace(/^\(unknown path\)\s*/, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\b(Template(Render|Syntax)Error|TypeError|RangeError|Error): /g, '')
    .trim();

export interface CompiledTemplate {
  /** Renders with the top-level keys of `parameters` as variables (a non-object gives none). */
  render(parameters: unknown, maxChars: number): string;
}

function library(state: RenderState): Library {
  const lib: Library = {
    filters: new Map(Object.entries(FILTERS)),
    tests: new Map(Object.entries(teraTests)),
    functions: new Map(Object.entries(teraFunctions)),
    bounded: (value) => state.bounded(value),
    spend: (text) => state.spend(text),
    renderBlock: (node, scope) => renderBlock(node, scope, lib),
  };
  return lib;
}

function parse(source: string): AstNode {
  try {
    return parseTemplate(preprocess(source));
  } catch (err) {
    throw new TemplateSyntaxError(tidy((err as Error).message));
  }
}

export function createTeraEngine(): { compile(source: string): CompiledTemplate } {
  const state = new RenderState();
  const lib = library(state);
  return {
    compile(source) {
      const tree = parse(source);
      checkTemplate(tree, KNOWN_NAMES);
      return {
        render(parameters, maxChars) {
          state.start(maxChars);
          const out: string[] = [];
          try {
            run(tree, Scope.forParameters(isPlainObject(parameters) ? parameters : {}), out, lib);
          } catch (err) {
            if (err instanceof TemplateRenderError) throw err;
            // Limits of the JavaScript runtime (stack depth, string length) or a library function's surprise.
            throw new TemplateRenderError(tidy((err as Error).message));
          }
          return out.join('');
        },
      };
    },
  };
}

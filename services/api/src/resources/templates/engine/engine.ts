import nunjucks from 'nunjucks';
import { CallArgs } from './args.ts';
import { HELPERS, TemplateSyntaxError, checkTemplate, rewrite, type KnownNames } from './ast.ts';
import { collectionFilters } from './collection-filters.ts';
import { internals, type AstNode, type CompileFrame } from './nunjucks-internals.ts';
import { preprocess } from './preprocess.ts';
import { stringFilters, type FilterBody } from './string-filters.ts';
import { MAX_RANGE_ITEMS, teraFunctions, teraTests } from './tests-and-functions.ts';
import { Missing, TemplateRenderError, isPlainObject, present, printed, textLimit, truthy } from './values.ts';

/**
 * Brokkr's templates are Tera; this engine is nunjucks (the same Jinja family) with Tera's
 * rules put on top: Tera's filters, tests and functions only (keyword arguments), strict
 * variables, Tera's truthiness and printing, no loaders (nothing outside the one template is
 * reachable), attribute lookups limited to the parameters' own data (no prototype or function
 * properties, so no way from a template to JavaScript), and an output budget.
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

interface Frame {
  lookup(name: string): unknown;
}

/** State of the render in progress (one at a time per environment: a worker renders sequentially). */
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
   * in a loop would reach a single allocation large enough to take the process down, not just
   * its worker.
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

function iterate(value: unknown, names: number, path: string): unknown {
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

function member(target: unknown, key: unknown, path: string): unknown {
  if (Array.isArray(target)) {
    const index = typeof key === 'number' ? key : typeof key === 'string' && /^\d+$/.test(key) ? Number(key) : -1;
    return Number.isInteger(index) && index >= 0 && index < target.length ? target[index] : new Missing(path);
  }
  const name = typeof key === 'number' ? String(key) : key;
  if (isPlainObject(target) && typeof name === 'string' && Object.hasOwn(target, name)) return target[name];
  return new Missing(path);
}

/** Tera's `+` is arithmetic only (JavaScript's would also join strings, without bound). */
function add(a: unknown, b: unknown): number {
  const [x, y] = [present(a), present(b)];
  if (typeof x !== 'number' || typeof y !== 'number') throw new TemplateRenderError('`+` adds numbers; use `~` to join strings');
  return x + y;
}

/** Tera's `in`: a member of an array, a substring, or a key of an object (own keys only). */
function contains(needle: unknown, haystack: unknown): boolean {
  const [n, h] = [present(needle), present(haystack)];
  if (Array.isArray(h)) return h.some((item) => JSON.stringify(item) === JSON.stringify(n));
  if (typeof h === 'string') return typeof n === 'string' && h.includes(n);
  if (isPlainObject(h)) return typeof n === 'string' && Object.hasOwn(h, n);
  throw new TemplateRenderError('`in` needs an array, a string or an object on its right');
}

function buildEnvironment(state: RenderState): nunjucks.Environment {
  // No loaders: `include`, `extends` and `import` have nothing to read (they are refused anyway).
  const env = new nunjucks.Environment([], { autoescape: false, throwOnUndefined: false });
  const raw = env as unknown as Record<string, unknown>;
  raw.filters = {};
  raw.tests = {};
  raw.globals = {};
  for (const [name, body] of Object.entries(FILTERS))
    env.addFilter(name, (value: unknown, ...rest: unknown[]) =>
      state.bounded(body(name === 'default' ? value : present(value), CallArgs.from(name, rest))),
    );
  const addTest = (env as unknown as { addTest(name: string, fn: (...args: never[]) => boolean): void }).addTest.bind(env);
  for (const [name, body] of Object.entries(teraTests))
    addTest(name, (value: unknown, ...rest: unknown[]) =>
      body(name.endsWith('defined') ? value : present(value), CallArgs.from(name, rest)),
    );
  for (const [name, body] of Object.entries(teraFunctions)) env.addGlobal(name, (...rest: unknown[]) => body(CallArgs.from(name, rest)));
  env.addGlobal(HELPERS.truthy, truthy);
  env.addGlobal(HELPERS.iterate, iterate);
  env.addGlobal(HELPERS.member, member);
  env.addGlobal(HELPERS.print, (value: unknown) => state.spend(printed(value)));
  env.addGlobal(HELPERS.text, (text: string) => state.spend(text));
  env.addGlobal(HELPERS.concat, (a: unknown, b: unknown) => state.bounded(printed(a) + printed(b)));
  env.addGlobal(HELPERS.add, add);
  env.addGlobal(HELPERS.contains, contains);
  const globals = raw.globals as Record<string, unknown>;
  // What compiled templates call for every name they read (TeraCompiler.compileSymbol).
  raw.tera = {
    lookup(context: { ctx: Record<string, unknown> }, frame: Frame, name: string): unknown {
      const local = frame.lookup(name);
      if (local !== undefined) return local;
      if (Object.hasOwn(context.ctx, name)) return context.ctx[name];
      return Object.hasOwn(globals, name) ? globals[name] : new Missing(name);
    },
  };
  return env;
}

/** nunjucks' compiler, except that every name is read through the strict lookup above. */
class TeraCompiler extends internals.compiler.Compiler {
  compileSymbol(node: AstNode, frame: CompileFrame): void {
    const local = frame.lookup(String(node.value));
    if (local) this._emit(local);
    else this._emit(`env.tera.lookup(context, frame, ${JSON.stringify(String(node.value))})`);
  }
}

const tidy = (message: string) =>
  message
    .replace(/^\(template\)\s*/, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\b(Template(Render|Syntax)Error|TypeError|RangeError|Error): /g, '')
    .trim();

export interface CompiledTemplate {
  /** Renders with the top-level keys of `parameters` as variables (a non-object gives none). */
  render(parameters: unknown, maxChars: number): string;
}

export function createTeraEngine(): { compile(source: string): CompiledTemplate } {
  const state = new RenderState();
  const env = buildEnvironment(state);
  return {
    compile(source) {
      let ast: AstNode;
      try {
        ast = internals.parser.parse(preprocess(source), [], {});
      } catch (err) {
        throw new TemplateSyntaxError(tidy((err as Error).message));
      }
      checkTemplate(ast, KNOWN_NAMES);
      let template: nunjucks.Template;
      try {
        const compiler = new TeraCompiler('template', false);
        compiler.compile(rewrite(ast), null);
        const props = new Function(compiler.getCode())() as unknown;
        const Template = nunjucks.Template as unknown as new (
          src: unknown,
          env: unknown,
          path: string,
          eager: boolean,
        ) => nunjucks.Template;
        template = new Template({ type: 'code', obj: props }, env, 'template', true);
      } catch (err) {
        throw new TemplateSyntaxError(tidy((err as Error).message));
      }
      return {
        render(parameters, maxChars) {
          state.start(maxChars);
          try {
            return template.render(isPlainObject(parameters) ? parameters : {});
          } catch (err) {
            throw new TemplateRenderError(tidy((err as Error).message));
          }
        },
      };
    },
  };
}

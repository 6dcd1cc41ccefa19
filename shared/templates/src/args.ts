import { Missing, TemplateRenderError, isPlainObject, present } from './values.ts';

/**
 * Arguments of a filter, test or function call. Tera passes them by keyword
 * (`default(value="x")`, `range(end=3)`); positional arguments are accepted too (a Jinja
 * habit), in the order Tera's documentation lists the keywords.
 */
export class CallArgs {
  private constructor(
    private readonly callee: string,
    private readonly positional: unknown[],
    private readonly keywords: ReadonlyMap<string, unknown>,
  ) {}

  static of(callee: string, positional: unknown[], keywords: ReadonlyMap<string, unknown> = new Map()): CallArgs {
    // An argument that names a missing variable is Tera's "not found" error.
    for (const value of [...positional, ...keywords.values()]) present(value);
    return new CallArgs(callee, positional, keywords);
  }

  /** The argument called `name` (keyword) or at `index` (positional); undefined when absent. */
  get(name: string, index: number): unknown {
    return this.keywords.has(name) ? this.keywords.get(name) : this.positional[index];
  }

  has(name: string, index: number): boolean {
    return this.get(name, index) !== undefined;
  }

  required(name: string, index: number): unknown {
    const value = this.get(name, index);
    if (value === undefined) throw new TemplateRenderError(`\`${this.callee}\` requires the \`${name}\` argument`);
    return value;
  }

  string(name: string, index: number, fallback?: string): string {
    const value = fallback === undefined ? this.required(name, index) : (this.get(name, index) ?? fallback);
    if (typeof value !== 'string') throw this.wrongType(name, 'a string', value);
    return value;
  }

  number(name: string, index: number, fallback?: number): number {
    const value = fallback === undefined ? this.required(name, index) : (this.get(name, index) ?? fallback);
    if (typeof value !== 'number') throw this.wrongType(name, 'a number', value);
    return value;
  }

  boolean(name: string, index: number, fallback: boolean): boolean {
    const value = this.get(name, index) ?? fallback;
    // Tera's own docs write `case_sensitive="true"`; accept the string form too.
    if (value === 'true' || value === 'false') return value === 'true';
    if (typeof value !== 'boolean') throw this.wrongType(name, 'a boolean', value);
    return value;
  }

  private wrongType(name: string, expected: string, value: unknown): TemplateRenderError {
    return new TemplateRenderError(`\`${this.callee}\`: the \`${name}\` argument must be ${expected}, got ${describe(value)}`);
  }
}

export function describe(value: unknown): string {
  if (value instanceof Missing) return 'an undefined value';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** `a.b.0`: Tera's dotted attribute paths (sort, unique, group_by, filter, map). */
export function attributeAt(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const part of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(part)) current = current[Number(part)];
    else if (isPlainObject(current) && Object.hasOwn(current, part)) current = current[part];
    else return undefined;
  }
  return current;
}

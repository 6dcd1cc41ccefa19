/**
 * How Tera treats values: strict lookups (a missing name is an
 * error as soon as it is used), Tera's truthiness and Tera's way of printing a value.
 */

/** A render failure caused by the template or its parameters: answered as 400 `template_render_failed`. */
export class TemplateRenderError extends Error {
  override name = 'TemplateRenderError';
}

/**
 * What a lookup of a name (or a field) that does not exist returns. It is not an error yet:
 * Tera lets `default`, `is defined` and `if` look at it. Any other use (printing it,
 * concatenating, arithmetic, a filter) throws Tera's "not found" error.
 */
export class Missing {
  constructor(readonly path: string) {
    Object.freeze(this);
  }

  error(): TemplateRenderError {
    return new TemplateRenderError(`Variable \`${this.path}\` not found in context while rendering 'template'`);
  }

  [Symbol.toPrimitive](): never {
    throw this.error();
  }

  toString(): never {
    throw this.error();
  }

  toJSON(): never {
    throw this.error();
  }
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Missing);

/** Tera: false, 0, "", [], {}, null and undefined names are falsy; everything else is truthy. */
export function truthy(value: unknown): boolean {
  if (value instanceof Missing || value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

/** Throws Tera's error for a missing value; returns anything else unchanged. */
export function present<T>(value: T): Exclude<T, Missing> {
  if (value instanceof Missing) throw value.error();
  return value as Exclude<T, Missing>;
}

/** Longest text one value may turn into (printing, `json_encode`); set per render by the engine. */
export const textLimit = { chars: Number.POSITIVE_INFINITY };

/**
 * Throws unless `value` written out (printed or as JSON) stays within `textLimit`. Lists that
 * hold themselves many times over (`set xs = [xs, xs]` in a loop) are small in memory and
 * astronomically long as text: measured before anything is built, stopping as soon as the
 * limit is passed, so the work is bounded by the limit.
 */
export function assertTextSize(value: unknown): void {
  let budget = textLimit.chars;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    budget -= typeof v === 'string' ? v.length + 2 : 8;
    if (budget < 0) throw new TemplateRenderError(`A value would be longer than the limit of ${textLimit.chars} characters`);
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (isPlainObject(v)) for (const [k, item] of Object.entries(v)) stack.push(k, item);
  }
}

/**
 * Tera's printed form: strings as they are, numbers and booleans as JSON writes them, null as
 * nothing, arrays as `[a, b]` (items printed the same way), objects as `[object]`.
 */
export function printed(value: unknown): string {
  const v = present(value);
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    assertTextSize(v);
    return `[${v.map(printed).join(', ')}]`;
  }
  return '[object]';
}

import { randomInt } from 'node:crypto';
import { CallArgs, describe } from './args.ts';
import { Missing, TemplateRenderError, isPlainObject } from './values.ts';

/** Longest list `range()` builds: loops beyond it are a runaway template, not a manifest. */
export const MAX_RANGE_ITEMS = 100_000;

type TestBody = (value: unknown, args: CallArgs) => boolean;

const isInteger = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function integer(test: string, value: unknown): number {
  if (!isInteger(value)) throw new TemplateRenderError(`Test \`${test}\` expects an integer, got ${describe(value)}`);
  return value;
}

function containing(value: unknown, args: CallArgs): boolean {
  const needle = args.required('pat', 0);
  if (typeof value === 'string') return typeof needle === 'string' && value.includes(needle);
  if (Array.isArray(value)) return value.some((item) => JSON.stringify(item) === JSON.stringify(needle));
  if (isPlainObject(value)) return typeof needle === 'string' && Object.hasOwn(value, needle);
  throw new TemplateRenderError(`Test \`containing\` expects a string, an array or an object, got ${describe(value)}`);
}

function matching(value: unknown, args: CallArgs): boolean {
  const pattern = args.string('regex', 0);
  if (typeof value !== 'string') return false;
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'u');
  } catch (err) {
    throw new TemplateRenderError(`Test \`matching\`: invalid regular expression: ${(err as Error).message}`);
  }
  return regex.test(value);
}

/** Tera's tests (`x is odd`); `defined`/`undefined` are the only ones that accept a missing value. */
export const teraTests: Record<string, TestBody> = {
  defined: (value) => !(value instanceof Missing),
  undefined: (value) => value instanceof Missing,
  odd: (value) => Math.abs(integer('odd', value)) % 2 === 1,
  even: (value) => integer('even', value) % 2 === 0,
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number',
  divisibleby: (value, args) => integer('divisibleby', value) % args.number('n', 0) === 0,
  iterable: (value) => Array.isArray(value) || isPlainObject(value),
  object: (value) => isPlainObject(value),
  starting_with: (value, args) => typeof value === 'string' && value.startsWith(args.string('pat', 0)),
  ending_with: (value, args) => typeof value === 'string' && value.endsWith(args.string('pat', 0)),
  containing,
  matching,
};

type FunctionBody = (args: CallArgs) => unknown;

function range(args: CallArgs): number[] {
  const end = args.number('end', 0);
  const start = args.number('start', 1, 0);
  const step = args.number('step_by', 2, 1);
  if (step <= 0 || !isInteger(step)) throw new TemplateRenderError('Function `range`: `step_by` must be a positive integer');
  const count = Math.max(0, Math.ceil((end - start) / step));
  if (count > MAX_RANGE_ITEMS) throw new TemplateRenderError(`Function \`range\`: ${count} items is over the limit of ${MAX_RANGE_ITEMS}`);
  return Array.from({ length: count }, (_v, i) => start + i * step);
}

function now(args: CallArgs): string | number {
  const date = new Date();
  if (args.boolean('timestamp', 0, false)) return Math.floor(date.getTime() / 1000);
  // The api runs in UTC, so the local and the UTC datetime are the same instant and text.
  return args.boolean('utc', 1, false) ? date.toISOString().replace('Z', '+00:00') : date.toISOString().slice(0, -1);
}

/**
 * Tera's global functions. `get_env` is deliberately absent: a template must not read the
 * server's environment (Brokkr's Tera would hand out the broker's variables).
 */
export const teraFunctions: Record<string, FunctionBody> = {
  range,
  now,
  throw: (args) => {
    throw new TemplateRenderError(args.string('message', 0));
  },
  get_random: (args) => {
    const start = args.number('start', 0, 0);
    const end = args.number('end', 1);
    if (!isInteger(start) || !isInteger(end) || end <= start)
      throw new TemplateRenderError('Function `get_random`: needs integers start < end');
    return randomInt(start, end);
  },
};

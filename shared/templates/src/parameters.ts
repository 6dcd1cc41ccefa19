import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import addFormatsModule from 'ajv-formats';

/**
 * A template's `parameters_schema` (a JSON Schema held as a string) and the parameters checked
 * against it, with ajv. The draft comes from `$schema` (2020-12, 2019-09, 07, 06; anything
 * else, or none, is read as draft-07, the default of the validator Brokkr uses). Error strings
 * read as Brokkr's do: `"<instance path>: <message>"`, or the message alone at the root, with
 * the validator's wording for the common keywords.
 */

export class SchemaProblem extends Error {
  override name = 'SchemaProblem';
}

type AjvInstance = InstanceType<typeof Ajv>;
const addFormats = addFormatsModule as unknown as (ajv: AjvInstance) => void;
// verbose: errors carry the failing value, which the messages quote.
const options = { allErrors: true, strict: false, validateFormats: true, verbose: true } as const;

function validatorFor(schemaUri: unknown): AjvInstance {
  const uri = typeof schemaUri === 'string' ? schemaUri : '';
  let ajv: AjvInstance;
  if (uri.includes('2020-12')) ajv = new Ajv2020(options) as unknown as AjvInstance;
  else if (uri.includes('2019-09')) ajv = new Ajv2019(options) as unknown as AjvInstance;
  else {
    ajv = new Ajv(options);
    if (uri.includes('draft-06')) ajv.addMetaSchema(draft06);
  }
  addFormats(ajv);
  return ajv;
}

/** Parses and compiles the schema; SchemaProblem says why it cannot be used. */
export function compileParametersSchema(text: string): ValidateFunction {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new SchemaProblem(`Invalid JSON: ${(err as Error).message}`);
  }
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema)))
    throw new SchemaProblem('Invalid JSON Schema: a schema is an object or a boolean');
  const record = typeof schema === 'object' ? { ...(schema as Record<string, unknown>) } : schema;
  const uri = typeof record === 'object' ? record.$schema : undefined;
  // Draft-04 and unknown drafts are validated as draft-07; their `$schema` would make ajv refuse them.
  if (typeof record === 'object' && typeof uri === 'string' && !/2020-12|2019-09|draft-0[67]/.test(uri)) delete record.$schema;
  try {
    return validatorFor(uri).compile(record as object);
  } catch (err) {
    throw new SchemaProblem(`Invalid JSON Schema: ${(err as Error).message}`);
  }
}

const show = (value: unknown) => JSON.stringify(value) ?? 'null';
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

type Params = Record<string, unknown>;
const limitOf = (p: Params) => show(p.limit);

/** Per keyword, the message Brokkr's validator (jsonschema-rs) writes; `v` is the failing value as JSON. */
const MESSAGES: Record<string, (v: string, p: Params) => string> = {
  required: (_v, p) => `${show(p.missingProperty)} is a required property`,
  type: (v, p) => `${v} is not of type ${String(p.type).split(',').map(show).join(', ')}`,
  minimum: (v, p) => `${v} is less than the minimum of ${limitOf(p)}`,
  maximum: (v, p) => `${v} is greater than the maximum of ${limitOf(p)}`,
  exclusiveMinimum: (v, p) => `${v} is less than or equal to the minimum of ${limitOf(p)}`,
  exclusiveMaximum: (v, p) => `${v} is greater than or equal to the maximum of ${limitOf(p)}`,
  minLength: (v, p) => `${v} is shorter than ${plural(p.limit as number, 'character')}`,
  maxLength: (v, p) => `${v} is longer than ${plural(p.limit as number, 'character')}`,
  pattern: (v, p) => `${v} does not match ${show(p.pattern)}`,
  enum: (v, p) => `${v} is not one of ${show(p.allowedValues)}`,
  const: (_v, p) => `${show(p.allowedValue)} was expected`,
  format: (v, p) => `${v} is not a ${show(p.format)}`,
  multipleOf: (v, p) => `${v} is not a multiple of ${show(p.multipleOf)}`,
  additionalProperties: (_v, p) =>
    `Additional properties are not allowed (${show(p.additionalProperty).replace(/"/g, "'")} was unexpected)`,
  minItems: (v, p) => `${v} has less than ${plural(p.limit as number, 'item')}`,
  maxItems: (v, p) => `${v} has more than ${plural(p.limit as number, 'item')}`,
  uniqueItems: (v) => `${v} has non-unique elements`,
  anyOf: (v) => `${v} is not valid under any of the given schemas`,
};

function message(e: ErrorObject): string {
  const known = MESSAGES[e.keyword];
  return known ? known(show(e.data), e.params as Params) : `${show(e.data)}: ${e.message ?? e.keyword}`;
}

/** Empty when the parameters are valid; otherwise one `"<path>: <message>"` string per error. */
export function parameterErrors(validate: ValidateFunction, parameters: unknown): string[] {
  if (validate(parameters)) return [];
  return (validate.errors ?? []).map((e) => (e.instancePath === '' ? message(e) : `${e.instancePath}: ${message(e)}`));
}

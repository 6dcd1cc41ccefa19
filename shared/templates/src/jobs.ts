import { TemplateSyntaxError } from './ast.ts';
import { createTeraEngine } from './engine.ts';
import { SchemaProblem, compileParametersSchema, parameterErrors } from './parameters.ts';
import { TemplateRenderError } from './values.ts';

/**
 * The work a renderer process does, as plain functions (render-process.ts calls them; tests can
 * too). Everything here runs on client input: template text, JSON Schemas (with regular
 * expressions) and parameters, which is why it runs off the event loop with a deadline.
 */

/** Checked when a template (version) is created. */
export interface CheckJob {
  kind: 'check';
  templateContent: string;
  parametersSchema: string;
}

/** Instantiation: validate the parameters, then render. */
export interface RenderJob {
  kind: 'render';
  templateContent: string;
  parametersSchema: string;
  parameters: unknown;
  maxOutputChars: number;
}

export type Job = CheckJob | RenderJob;

export type JobFailureCode = 'invalid_template_syntax' | 'invalid_parameters_schema' | 'invalid_parameters' | 'template_render_failed';

export type JobResult = { ok: true; output?: string } | { ok: false; code: JobFailureCode; message: string; validationErrors?: string[] };

const engine = createTeraEngine();

function failure(err: unknown, code: JobFailureCode, expected: new (...args: never[]) => Error): JobResult {
  if (err instanceof expected) return { ok: false, code, message: err.message };
  throw err;
}

export function runJob(job: Job): JobResult {
  let template;
  try {
    template = engine.compile(job.templateContent);
  } catch (err) {
    return failure(err, 'invalid_template_syntax', TemplateSyntaxError);
  }
  let validate;
  try {
    validate = compileParametersSchema(job.parametersSchema);
  } catch (err) {
    return failure(err, 'invalid_parameters_schema', SchemaProblem);
  }
  if (job.kind === 'check') return { ok: true };
  const validationErrors = parameterErrors(validate, job.parameters);
  if (validationErrors.length > 0) return { ok: false, code: 'invalid_parameters', message: 'Invalid parameters', validationErrors };
  try {
    return { ok: true, output: template.render(job.parameters, job.maxOutputChars) };
  } catch (err) {
    if (err instanceof TemplateRenderError)
      return { ok: false, code: 'template_render_failed', message: `Template rendering failed: ${err.message}` };
    // A runaway template can also end in a JavaScript limit (stack depth, string length).
    if (err instanceof RangeError)
      return { ok: false, code: 'template_render_failed', message: `Template rendering failed: ${err.message}` };
    throw err;
  }
}

import { parentPort } from 'node:worker_threads';
import type { YamlLimits } from './limits.ts';
import { validateDeploymentYaml, type ValidateOptions, type YamlVerdict } from './validate.ts';

/** One validation, posted by validator-pool.ts; the worker answers with a `WorkerReply`. */
export interface WorkerJob {
  content: string;
  options: ValidateOptions;
  limits: YamlLimits;
}

export type WorkerReply = YamlVerdict;

// The thread entry: validations run here, one at a time, so the api's event loop never waits
// for the parser. Anything thrown is a bug in the validator and ends the thread (the pool
// reports it and starts another).
parentPort?.on('message', (job: WorkerJob) => {
  const reply: WorkerReply = validateDeploymentYaml(job.content, job.options, job.limits);
  parentPort?.postMessage(reply);
});

import { parentPort } from 'node:worker_threads';
import { runJob, type Job, type JobResult } from './jobs.ts';

// The thread entry: one job at a time, posted by renderer.ts. The thread has no environment
// variables (renderer.ts starts it with `env: {}`), a capped heap, and is ended at its deadline.
parentPort?.on('message', (job: Job) => {
  const reply: JobResult = runJob(job);
  parentPort?.postMessage(reply);
});
// Loaded: from now on a job's deadline measures the job, not the thread's start-up.
parentPort?.postMessage({ ready: true });

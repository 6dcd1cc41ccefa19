import { runJob, type Job, type JobResult } from './jobs.ts';
import { lockdown } from './lockdown.ts';

// A renderer process's entry (renderer.ts starts it through sandbox.ts): one job at a time over
// the IPC channel. Everything is loaded by now, so the lockdown costs the jobs nothing.
lockdown();
process.on('message', (job: Job) => {
  const reply: JobResult = runJob(job);
  process.send?.(reply);
});
// Ready: from now on a job's deadline measures the job, not the process's start-up.
process.send?.({ ready: true });

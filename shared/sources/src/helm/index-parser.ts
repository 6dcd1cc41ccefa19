import { Worker } from 'node:worker_threads';
import { SourceError } from '../errors.ts';
import type { ChartEntry } from './chart-index.ts';
import type { IndexJob, IndexReply } from './index-worker.ts';

// The worker runs the same kind of file as this module: .ts under tsx (tests), .js once built.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './index-worker.ts' : './index-worker.js', import.meta.url);

/** A hostile index may cost this much heap and time, on a thread of its own, then it is refused. */
export const INDEX_PARSER_LIMITS = { memoryMb: 256, budgetMs: 10_000 };

const unusable = (reason: string) => new SourceError('invalid_source', `the repository's index.yaml is not usable: ${reason}`, { reason });

/**
 * findChartVersion on a thread of its own: the index is the remote's text, and YAML that is
 * slow or greedy to parse (deep nesting, millions of nodes) must not hold the api's event loop
 * or heap. The thread gets a heap cap and a time budget; past either it is ended and the index
 * refused.
 */
export function findChartVersionOffThread(index: Buffer, chart: string, version: string): Promise<ChartEntry> {
  const job: IndexJob = { index, chart, version };
  const worker = new Worker(WORKER_URL, { workerData: job, resourceLimits: { maxOldGenerationSizeMb: INDEX_PARSER_LIMITS.memoryMb } });
  return new Promise<ChartEntry>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(unusable(`parsing it took longer than ${INDEX_PARSER_LIMITS.budgetMs} ms`));
      void worker.terminate();
    }, INDEX_PARSER_LIMITS.budgetMs);
    const settle = (fn: () => void) => {
      clearTimeout(timer);
      fn();
    };
    worker.once('message', (reply: IndexReply) =>
      settle(() => (reply.ok ? resolve(reply.entry) : reject(new SourceError(reply.code, reply.message, reply.details)))),
    );
    worker.once('error', (err: Error & { code?: string }) =>
      settle(() =>
        reject(
          unusable(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `parsing it needs more than ${INDEX_PARSER_LIMITS.memoryMb} MB` : err.message),
        ),
      ),
    );
    worker.once('exit', () => settle(() => reject(unusable('its parser stopped without an answer'))));
  });
}

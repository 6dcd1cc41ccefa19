import { parentPort, workerData } from 'node:worker_threads';
import { SourceError } from '../errors.ts';
import { findChartVersion, type ChartEntry } from './chart-index.ts';

/** What index-parser.ts hands the thread. */
export interface IndexJob {
  index: Uint8Array;
  chart: string;
  version: string;
}

export type IndexReply =
  { ok: true; entry: ChartEntry } | { ok: false; code: SourceError['code']; message: string; details?: Record<string, unknown> };

function answer(job: IndexJob): IndexReply {
  try {
    return {
      ok: true,
      entry: findChartVersion(Buffer.from(job.index.buffer, job.index.byteOffset, job.index.byteLength), job.chart, job.version),
    };
  } catch (err) {
    if (err instanceof SourceError)
      return { ok: false, code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
    return {
      ok: false,
      code: 'invalid_source',
      message: `the repository's index.yaml is not usable: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

// The thread's entry: one index, one answer, then the thread ends.
if (parentPort && workerData) parentPort.postMessage(answer(workerData as IndexJob));

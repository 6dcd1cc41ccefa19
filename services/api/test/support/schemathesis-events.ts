import { readFileSync } from 'node:fs';

/**
 * Reads schemathesis 4.x's NDJSON event stream (`--report ndjson`): every `ScenarioFinished`
 * carries the cases it ran, each case's check results and the response it got. Unknown event
 * kinds are ignored, so a newer schemathesis only risks counting less, never failing to parse.
 */

type Event = Record<string, unknown>;

export interface FuzzFailure {
  check: string;
  operation: string;
  /** The response status when there was one. */
  status?: number;
  message: string;
}

interface CheckResult {
  name: string;
  status: string;
  failure_info?: { failure?: { title?: string; message?: string } };
}

interface Recorder {
  label?: string;
  cases?: Record<string, unknown>;
  checks?: Record<string, CheckResult[]>;
  interactions?: Record<string, { response?: { status_code?: number } | null }>;
}

export interface EventSummary {
  operations: number;
  cases: number;
  failures: FuzzFailure[];
  errors: string[];
}

function failureMessage(check: CheckResult): string {
  const failure = check.failure_info?.failure;
  return [failure?.title, failure?.message].filter(Boolean).join(': ').replace(/\n/g, '; ');
}

function failuresOf(recorder: Recorder): FuzzFailure[] {
  const operation = recorder.label ?? '?';
  return Object.entries(recorder.checks ?? {}).flatMap(([caseId, checks]) => {
    const status = recorder.interactions?.[caseId]?.response?.status_code;
    return checks
      .filter((check) => check.status === 'failure')
      .map((check) => ({ check: check.name, operation, ...(status === undefined ? {} : { status }), message: failureMessage(check) }));
  });
}

/** A failure counts once per operation, check and status (shrinking repeats the same one). */
function unique(failures: FuzzFailure[]): FuzzFailure[] {
  const seen = new Map<string, FuzzFailure>();
  for (const f of failures) seen.set(`${f.operation} ${f.check} ${f.status ?? '-'} ${f.message}`, f);
  return [...seen.values()];
}

function errorText(value: unknown): string {
  const info = (value ?? {}) as { label?: string; info?: { title?: string; message?: string } };
  return [info.label, info.info?.title, info.info?.message].filter(Boolean).join(': ') || JSON.stringify(value).slice(0, 300);
}

export function summarizeEvents(events: Event[]): EventSummary {
  const operations = new Set<string>();
  const failures: FuzzFailure[] = [];
  const errors: string[] = [];
  let cases = 0;
  for (const event of events) {
    const [kind, value] = Object.entries(event)[0] ?? [];
    if (kind === 'NonFatalError' || kind === 'FatalError') errors.push(`${kind}: ${errorText(value)}`);
    if (kind !== 'ScenarioFinished') continue;
    const recorder = ((value as { recorder?: Recorder }).recorder ?? {}) as Recorder;
    if (recorder.label) operations.add(recorder.label);
    cases += Object.keys(recorder.cases ?? {}).length;
    failures.push(...failuresOf(recorder));
  }
  return { operations: operations.size, cases, failures: unique(failures), errors };
}

/** The summary of an NDJSON report file; a missing file (schemathesis never started) counts nothing. */
export function readEventStream(file: string): EventSummary {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return summarizeEvents([]);
  }
  const events = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Event);
  return summarizeEvents(events);
}

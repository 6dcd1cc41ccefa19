import type { LogSource, LogStreamRequest } from '../../src/telemetry/index.ts';

/**
 * Container logs for a kubelet-less apiserver (the test seam of the log path): the test says what
 * each `namespace/pod/container` has printed (`<RFC3339Nano> <text>` lines, as the kubelet writes
 * them with timestamps=true). A request gets the lines at or after its `sinceTime` (the kubelet
 * rounds it down to the second), then the stream stays open, like `follow`, until it is aborted.
 */
export class FakeContainerLogs {
  readonly requests: LogStreamRequest[] = [];
  private readonly lines = new Map<string, string[]>();

  print(namespace: string, pod: string, container: string, ...lines: string[]): void {
    const key = `${namespace}/${pod}/${container}`;
    this.lines.set(key, [...(this.lines.get(key) ?? []), ...lines]);
  }

  readonly source: LogSource = (req) => {
    this.requests.push(req);
    const all = this.lines.get(`${req.namespace}/${req.pod}/${req.container}`) ?? [];
    const since = req.sinceTime ? Math.floor(Date.parse(req.sinceTime) / 1000) * 1000 : undefined;
    const lines = since === undefined ? all : all.filter((l) => Date.parse(l.slice(0, l.indexOf(' '))) >= since);
    return (async function* () {
      yield* lines;
      await new Promise<void>((resolve) =>
        req.signal.aborted ? resolve() : req.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    })();
  };
}

/** A kubelet-style line: `<RFC3339Nano> <text>`. */
export const stamped = (at: Date, text: string, nanos = '000001') => `${at.toISOString().replace('Z', '')}${nanos}Z ${text}`;

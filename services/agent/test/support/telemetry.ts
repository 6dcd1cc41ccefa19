import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import type { TelemetryFrameInput } from '@brokkr/contracts';
import type { LogSource, LogStreamRequest, TelemetryChannel } from '../../src/telemetry/index.ts';

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

/**
 * A minimal live channel over the api's real `/internal/ws/agent`, for tests that run the
 * telemetry streamers in-process (so that they can be given the fake log source).
 */
export class WsTelemetryChannel extends EventEmitter implements TelemetryChannel {
  state = 'down';

  private constructor(private readonly ws: WebSocket) {
    super();
    ws.on('close', () => this.setState('down'));
  }

  static open(brokerUrl: string, pak: string): Promise<WsTelemetryChannel> {
    const ws = new WebSocket(`${brokerUrl.replace(/^http/, 'ws')}/internal/ws/agent`, { headers: { authorization: `Bearer ${pak}` } });
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        const channel = new WsTelemetryChannel(ws);
        channel.setState('up');
        resolve(channel);
      });
      ws.once('error', reject);
    });
  }

  sendTelemetry(frame: TelemetryFrameInput): boolean {
    if (this.state !== 'up') return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  private setState(state: string): void {
    this.state = state;
    this.emit('state', state);
  }

  close(): void {
    this.ws.terminate();
  }
}

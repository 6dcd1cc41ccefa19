import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives a load peak's memory back to the operating system once the process is quiet again.
 *
 * Why it is needed (ADR 0030): V8 keeps the 256 KiB pages its heap gave up in a pool, resident,
 * to reuse them. Its own idle-time GCs shrink the heap but not the pool: after bench:api's
 * overloaded ladders the api held 110 MiB of such pages with a 38 MiB heap, and kept them for
 * good (RSS 200 MiB, 30 MiB live). Only a "last resort" full GC returns them. That GC stops the
 * event loop for 40–80 ms, so it runs only when the last interval was mostly idle, RSS is above a
 * threshold, and RSS has grown since the previous release (a process whose live data is simply
 * large is not collected again and again). V8's memory-saver mode returns the pages too, but
 * costs 30–50 % more api CPU at 500–1,000 req/s: measured, rejected.
 */
export interface MemoryReleaseOptions {
  /** RSS in bytes above which a quiet process gives memory back; 0 turns the release off. */
  thresholdBytes: number;
  /** How often the process looks (ms). */
  intervalMs?: number;
  /** Event-loop utilisation of the last interval (0–1) below which the process counts as quiet. */
  quietBelow?: number;
  /** How much RSS must have grown since the last release before another runs (bytes). */
  regrowthBytes?: number;
  /** Told after every release. */
  onRelease?: (release: MemoryReleased) => void;
  /** Told once when V8's gc extension is unavailable and the release stays off. */
  onUnavailable?: (reason: string) => void;
}

export interface MemoryReleased {
  rssBeforeBytes: number;
  rssAfterBytes: number;
  pauseMs: number;
}

/** What the process looked like over the last interval. */
export interface MemoryReading {
  rssBytes: number;
  /** Event-loop utilisation, 0–1. */
  utilisation: number;
}

const DEFAULTS = { intervalMs: 10_000, quietBelow: 0.25, regrowthBytes: 32 * 1024 * 1024 };

/**
 * The decision alone: quiet, above the threshold, and grown since `rssAfterLastRelease` (0 before
 * the first release).
 */
export function shouldReleaseMemory(
  reading: MemoryReading,
  rssAfterLastRelease: number,
  options: Pick<MemoryReleaseOptions, 'thresholdBytes' | 'quietBelow' | 'regrowthBytes'>,
): boolean {
  const quietBelow = options.quietBelow ?? DEFAULTS.quietBelow;
  const regrowth = options.regrowthBytes ?? DEFAULTS.regrowthBytes;
  if (options.thresholdBytes <= 0 || reading.utilisation >= quietBelow) return false;
  return reading.rssBytes > options.thresholdBytes && reading.rssBytes > rssAfterLastRelease + regrowth;
}

type GcExtension = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's gc extension, taken from a fresh vm context so that `gc` never appears on the process's
 * own global (nothing else can call it). The flag is switched off again right after.
 */
function gcExtension(): GcExtension | string {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    v8.setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? (gc as GcExtension) : 'V8 did not expose its gc extension';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export interface MemoryRelease {
  /** Runs the release now, whatever the policy says (tests, and an operator's diagnosis). */
  releaseNow(): MemoryReleased | undefined;
  stop(): void;
}

/** Starts the periodic check (its timer never keeps the process alive). */
export function startMemoryRelease(options: MemoryReleaseOptions): MemoryRelease {
  const off: MemoryRelease = { releaseNow: () => undefined, stop: () => undefined };
  if (options.thresholdBytes <= 0) return off;
  const gc = gcExtension();
  if (typeof gc === 'string') {
    options.onUnavailable?.(gc);
    return off;
  }
  let rssAfterLastRelease = 0;
  let mark: EventLoopUtilization = performance.eventLoopUtilization();

  const releaseNow = (): MemoryReleased => {
    const rssBeforeBytes = process.memoryUsage.rss();
    const started = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const released = { rssBeforeBytes, rssAfterBytes: process.memoryUsage.rss(), pauseMs: performance.now() - started };
    rssAfterLastRelease = released.rssAfterBytes;
    options.onRelease?.(released);
    return released;
  };

  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilisation = performance.eventLoopUtilization(now, mark).utilization;
    mark = now;
    if (shouldReleaseMemory({ rssBytes: process.memoryUsage.rss(), utilisation }, rssAfterLastRelease, options)) releaseNow();
  }, options.intervalMs ?? DEFAULTS.intervalMs);
  timer.unref();
  return { releaseNow, stop: () => clearInterval(timer) };
}

import { get } from './api.js';
import { onLive } from './live.js';
import { useEffect, useState } from './html.js';

/**
 * Reads `path` and re-reads it when a matching live hint arrives (debounced, so a burst of events
 * costs one request; `rereadAfterMs` says when, after the last hint) or every `everyMs` for data no event announces (heartbeats). While a re-read
 * or a read of a new path runs, the previous data stays on screen. `path` null = nothing to read yet.
 * Returns { data, error, loading, reload }.
 */
export function useApi(path, { live, everyMs, rereadAfterMs = [200] } = {}) {
  const [state, setState] = useState({ data: undefined, error: undefined, loading: true, path });
  const [tick, setTick] = useState(0);

  useEffect(() => {
    if (!path) return undefined;
    let cancelled = false;
    // A new path (next page, another search) keeps the current rows on screen until it answers;
    // pages about another entity are remounted (keyed by id in main.js), so nothing leaks across.
    setState((s) => ({ ...s, loading: true }));
    get(path).then(
      (data) => !cancelled && setState({ data, error: undefined, loading: false, path }),
      (error) => !cancelled && setState({ data: undefined, error, loading: false, path }),
    );
    return () => {
      cancelled = true;
    };
  }, [path, tick]);

  useEffect(() => {
    if (!live || !path) return undefined;
    let timers = [];
    const off = onLive(
      (kind, envelope) => kind === 'resync' || live(kind, envelope),
      () => {
        timers.forEach(clearTimeout);
        timers = rereadAfterMs.map((ms) => setTimeout(() => setTick((t) => t + 1), ms));
      },
    );
    return () => {
      timers.forEach(clearTimeout);
      off();
    };
  }, [path, live]);

  useEffect(() => {
    if (!everyMs || !path) return undefined;
    const id = setInterval(() => setTick((t) => t + 1), everyMs);
    return () => clearInterval(id);
  }, [path, everyMs]);

  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** Re-renders every `ms` (heartbeat ages count up between reads). */
export function useNow(ms = 1000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(id);
  }, [ms]);
  return now;
}

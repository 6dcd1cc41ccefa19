// Server-sent events from /ui/events, read with fetch() so the PAK goes in the Authorization
// header (EventSource cannot set headers, and a PAK in a URL ends up in logs). Each message is a
// hint to re-read: pages subscribe with a predicate and refetch what they show.
import { session } from './session.js';

const subscribers = new Set();
const statusListeners = new Set();
let status = 'off';
let controller = null;
let connectedBefore = false;

function setStatus(next) {
  status = next;
  for (const fn of statusListeners) fn(next);
}

export const liveStatus = () => status;
export function onLiveStatus(fn) {
  statusListeners.add(fn);
  return () => statusListeners.delete(fn);
}

/**
 * `match(kind, envelope)`: kind is 'event' (a domain event, `envelope.event_type`) or 'audit'
 * (an audit entry, `envelope.action`). Returns the unsubscribe function.
 */
export function onLive(match, fn) {
  const sub = { match, fn };
  subscribers.add(sub);
  return () => subscribers.delete(sub);
}

/** A predicate for event types by prefix (`'deployment.'`) or audit entries (`'audit'`). */
export const prefixes =
  (...list) =>
  (kind, envelope) =>
    list.some((p) => (p === 'audit' ? kind === 'audit' : kind === 'event' && String(envelope.event_type).startsWith(p)));

function dispatch(block) {
  let kind = 'message';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) kind = line.slice(6).trim();
    else if (line.startsWith('data:')) data += line.slice(5).trim();
  }
  if (kind === 'ready') {
    // After a reconnect, hints sent while we were away are lost: every page re-reads once.
    if (connectedBefore) for (const sub of subscribers) sub.fn('resync', {});
    connectedBefore = true;
    return setStatus('live');
  }
  if (!data) return;
  const envelope = JSON.parse(data);
  for (const sub of subscribers) if (sub.match(kind, envelope)) sub.fn(kind, envelope);
}

async function connect(signal) {
  const res = await fetch('/ui/events', { headers: { Authorization: `Bearer ${session.pak}` }, signal });
  if (res.status === 401) throw Object.assign(new Error('unauthorized'), { fatal: true });
  if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      dispatch(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  }
}

/** Keeps one stream open while signed in, reconnecting after a pause when it drops. */
export function startLive() {
  stopLive();
  const own = new AbortController();
  controller = own;
  connectedBefore = false;
  (async () => {
    while (!own.signal.aborted) {
      try {
        setStatus('connecting');
        await connect(own.signal);
      } catch (err) {
        if (own.signal.aborted || err.fatal) break;
      }
      setStatus('reconnecting');
      await new Promise((r) => setTimeout(r, 2000));
    }
    if (controller === own) setStatus('off');
  })();
}

export function stopLive() {
  controller?.abort();
  controller = null;
  setStatus('off');
}

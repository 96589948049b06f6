/** Small hooks shared by the views: loading from the API, and waking up when the site changes. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { openEvents, type EventItem, type Stream } from './live';

type Listener = (event: EventItem) => void;
const listeners = new Set<Listener>();
let stream: Stream | undefined;

/** Listens to the event stream; the one socket is open while anyone listens. */
export function listen(fn: Listener): () => void {
  listeners.add(fn);
  stream ??= openEvents((e) => {
    for (const l of listeners) l(e);
  });
  return () => {
    listeners.delete(fn);
    if (listeners.size === 0) {
      stream?.close();
      stream = undefined;
    }
  };
}

/**
 * A number that grows when an event of one of `components` commits (at most every `settleMs`,
 * so a burst is one reload) and every `fallbackMs` in any case (a user without events:view).
 */
export function usePulse(components: readonly string[], settleMs = 300, fallbackMs = 10_000): number {
  const [n, setN] = useState(0);
  const key = components.join(',');
  useEffect(() => {
    let pending: ReturnType<typeof setTimeout> | undefined;
    const bump = () => {
      pending ??= setTimeout(() => {
        pending = undefined;
        setN((v) => v + 1);
      }, settleMs);
    };
    const stop = listen((e) => {
      if (components.includes(e.component)) bump();
    });
    const fallback = setInterval(bump, fallbackMs);
    return () => {
      stop();
      clearInterval(fallback);
      if (pending !== undefined) clearTimeout(pending);
    };
  }, [key, settleMs, fallbackMs]);
  return n;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  reload(): void;
}

/** Runs `load` whenever `deps` change; keeps the last good answer while a reload runs. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [again, setAgain] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    load().then((d) => {
      if (mine !== latest.current) return;
      setData(d);
      setError(undefined);
    }, (err: unknown) => {
      if (mine !== latest.current) return;
      setError(err instanceof Error ? err.message : String(err));
    });
  }, [...deps, again]);
  const reload = useCallback(() => setAgain((v) => v + 1), []);
  return { data, error, reload };
}

import { useEffect, useRef, useState } from 'preact/hooks';
import type { ParleyEvent } from '../api/types';
import { useApp } from '../app.context';
import type { LiveStatus } from './live.client';

export interface LiveData<T> {
  data?: T;
  error?: unknown;
  reload: () => void;
}

const BATCH_MS = 80;

/**
 * Data loaded over HTTP and loaded again whenever a relevant event arrives (and after every
 * resubscribe). Bursts of events are batched, and a load never runs twice at once: an event
 * during a load schedules exactly one more, so the view always ends on the newest state.
 */
export function useLiveData<T>(load: () => Promise<T>, relevant: (event: ParleyEvent) => boolean, deps: unknown[]): LiveData<T> {
  const { live } = useApp();
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const trigger = useRef<() => void>(() => undefined);

  useEffect(() => {
    let cancelled = false;
    let running = false;
    let again = false;
    let timer: number | undefined;
    const run = async (): Promise<void> => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      do {
        again = false;
        try {
          const data = await load();
          if (!cancelled) {
            setState({ data });
          }
        } catch (error) {
          if (!cancelled) {
            setState((previous) => ({ ...previous, error }));
          }
        }
      } while (again && !cancelled);
      running = false;
    };
    const schedule = (): void => {
      if (timer === undefined) {
        timer = window.setTimeout(() => {
          timer = undefined;
          void run();
        }, BATCH_MS);
      }
    };
    trigger.current = schedule;
    setState({});
    const offEvent = live.onEvent((event) => {
      if (relevant(event)) {
        schedule();
      }
    });
    const offResync = live.onResync(schedule);
    void run();
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
      offEvent();
      offResync();
    };
    // The caller's deps decide when to start over (load and relevant close over the same values).
  }, deps);

  return { ...state, reload: () => trigger.current() };
}

export function useLiveEvents(listener: (event: ParleyEvent) => void, deps: unknown[]): void {
  const { live } = useApp();
  useEffect(() => live.onEvent(listener), deps);
}

export function useLiveStatus(): LiveStatus {
  const { live } = useApp();
  const [status, setStatus] = useState(live.status);
  useEffect(() => {
    setStatus(live.status);
    return live.onStatus(setStatus);
  }, [live]);
  return status;
}

/** The current time, refreshed every `intervalMs` (countdowns). */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** The last sequence number processed (shown on the connection indicator, for support and tests). */
export function useLastSeq(): number | undefined {
  const { live } = useApp();
  const [seq, setSeq] = useState(live.seq);
  useEffect(() => {
    const offEvent = live.onEvent((event) => setSeq(event.seq));
    const offResync = live.onResync(() => setSeq(live.seq));
    return () => {
      offEvent();
      offResync();
    };
  }, [live]);
  return seq;
}

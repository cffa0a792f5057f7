import { useEffect, useState } from 'preact/hooks';

/** A value components can follow: `useSignal(s)` redraws the component when `s.set()` changes it. */
export function signal<T>(initial: T) {
  let value = initial;
  const listeners = new Set<(v: T) => void>();
  return {
    get: () => value,
    set(next: T) {
      if (Object.is(next, value)) return;
      value = next;
      for (const listener of listeners) listener(next);
    },
    subscribe(listener: (v: T) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
export type Signal<T> = ReturnType<typeof signal<T>>;

export function useSignal<T>(s: Signal<T>): T {
  const [, redraw] = useState(0);
  useEffect(() => {
    const off = s.subscribe(() => redraw((n) => n + 1));
    return () => {
      off();
    };
  }, [s]);
  return s.get();
}

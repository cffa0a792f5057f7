/**
 * How long to wait before the next attempt of something that failed: `baseMs` after the first
 * failure, twice as long after each further one, never more than `maxMs`, so that a server that
 * is down is not hammered and one that is back is soon used again.
 */
export const backoff = (attempt: number, baseMs: number, maxMs: number) => Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);

/** The pause of a background loop between its rounds, which news and a stop end early. */
export interface Sleeper {
  /**
   * Waits `ms`, less when woken or stopped meanwhile, not at all when woken since the last
   * `clear()` or stopped. Never rejects.
   */
  sleep(ms: number): Promise<void>;
  /** There is work: ends the sleeps under way, or else the next one. */
  wake(): void;
  /**
   * Forgets the wakes so far. A loop calls it before it looks for work, so that news arriving
   * while it looks still ends the sleep that follows.
   */
  clear(): void;
  /** Ends the sleeps under way and makes every later one return at once: the loop's stop need not wait for its timer. */
  stop(): void;
  readonly stopped: boolean;
}

export function sleeper(): Sleeper {
  let woken = false;
  let stopped = false;
  const sleeping = new Set<() => void>();
  const endAll = () => {
    for (const end of [...sleeping]) end();
  };
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        if (woken || stopped) return resolve();
        const end = () => {
          clearTimeout(timer);
          sleeping.delete(end);
          resolve();
        };
        // A sleeping loop does not keep the process alive: whatever it waits for does.
        const timer = setTimeout(end, ms);
        timer.unref();
        sleeping.add(end);
      }),
    wake() {
      woken = true;
      endAll();
    },
    clear() {
      woken = false;
    },
    stop() {
      stopped = true;
      endAll();
    },
    get stopped() {
      return stopped;
    },
  };
}

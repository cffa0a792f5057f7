import { withoutDeadline } from './deadline.ts';

/**
 * Batches lookups by key: the keys asked for within one event-loop turn are read by one call of
 * `read` at the turn's end (setImmediate), and each caller gets its own value (undefined when `read`
 * has none) or the read's error. A service answers the requests of one NATS read in one turn, so
 * under load their reads of the same kind become one query.
 */
export function turnBatched<K, V>(read: (keys: K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | undefined> {
  type Caller = { resolve(value: V | undefined): void; reject(err: unknown): void };
  let waiting: Map<K, Caller[]> | undefined;
  const flush = async (batch: Map<K, Caller[]>) => {
    try {
      const values = await read([...batch.keys()]);
      for (const [key, callers] of batch) for (const c of callers) c.resolve(values.get(key));
    } catch (err) {
      for (const callers of batch.values()) for (const c of callers) c.reject(err);
    }
  };
  return (key) =>
    new Promise((resolve, reject) => {
      if (!waiting) {
        const batch = new Map<K, Caller[]>();
        waiting = batch;
        // The read serves every caller of the turn, so it keeps none's deadline.
        withoutDeadline(() =>
          setImmediate(() => {
            waiting = undefined;
            void flush(batch);
          }),
        );
      }
      const callers = waiting.get(key);
      if (callers) callers.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
    });
}

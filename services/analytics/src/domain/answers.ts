import { JsonAnswer } from '@kn/contracts';

/**
 * Answers reused for a while: a dashboard is read by many at once and its figures take a scan of
 * the range, so one computation per question asked serves every caller who asks the same within
 * `ttlMs` (those asking while it runs wait for it). Kept as JSON text: an answer of a few hundred
 * rows costs more to serialize than to send, once a caller. Bounded: the oldest answers go first.
 */
export function answerCache(options: { ttlMs: number; maxEntries: number }) {
  const entries = new Map<string, { at: number; answer: Promise<JsonAnswer<unknown>> }>();
  return <T>(key: string, compute: () => Promise<T>): Promise<JsonAnswer<T>> => {
    const written = () => compute().then((value) => new JsonAnswer(value));
    if (options.ttlMs <= 0) return written();
    const now = Date.now();
    const known = entries.get(key);
    if (known && now - known.at < options.ttlMs) return known.answer as Promise<JsonAnswer<T>>;
    const answer = written();
    entries.delete(key);
    entries.set(key, { at: now, answer });
    // A failure is not kept: the next caller asks again.
    answer.catch(() => entries.get(key)?.answer === answer && entries.delete(key));
    while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!);
    return answer;
  };
}

/**
 * Answers reused for a while: a dashboard is read by many at once and its figures take a scan of
 * the range, so one computation per question asked serves every caller who asks the same within
 * `ttlMs` (those asking while it runs wait for it). Bounded: the oldest answers go first.
 */
export function answerCache(options: { ttlMs: number; maxEntries: number }) {
  const entries = new Map<string, { at: number; answer: Promise<unknown> }>();
  return <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    if (options.ttlMs <= 0) return compute();
    const now = Date.now();
    const known = entries.get(key);
    if (known && now - known.at < options.ttlMs) return known.answer as Promise<T>;
    const answer = compute();
    entries.delete(key);
    entries.set(key, { at: now, answer });
    // A failure is not kept: the next caller asks again.
    answer.catch(() => entries.get(key)?.answer === answer && entries.delete(key));
    while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!);
    return answer;
  };
}

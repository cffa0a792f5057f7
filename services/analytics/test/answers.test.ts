import type { JsonAnswer } from '@kn/contracts';
import { answerCache } from '../src/domain/answers.ts';

test('one computation serves every caller of the same question within the time, then it is asked again', async () => {
  // What a caller is sent: the answer's JSON text.
  const sent = async (answer: Promise<JsonAnswer<number>>) => JSON.parse((await answer).json) as number;
  let computed = 0;
  let now = 1000;
  const realNow = Date.now;
  Date.now = () => now;
  try {
    const cached = answerCache({ ttlMs: 100, maxEntries: 2 });
    const compute = async () => ++computed;
    expect(await Promise.all([sent(cached('a', compute)), sent(cached('a', compute))])).toEqual([1, 1]);
    now += 99;
    expect(await sent(cached('a', compute))).toBe(1);
    now += 1;
    expect(await sent(cached('a', compute))).toBe(2);
    // Bounded: a third question pushes out the oldest.
    await cached('b', compute);
    await cached('c', compute);
    expect(await sent(cached('a', compute))).toBe(5);
    // A failure is not kept.
    await expect(cached('d', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await sent(cached('d', compute))).toBe(6);
    // 0: never reused.
    const never = answerCache({ ttlMs: 0, maxEntries: 2 });
    expect([await sent(never('a', compute)), await sent(never('a', compute))]).toEqual([7, 8]);
  } finally {
    Date.now = realNow;
  }
});

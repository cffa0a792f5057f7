import { backoff, sleeper } from '@kn/bus';

/** Longer than any test may take: a sleep that ends within the test was ended early. */
const LONG = 600_000;

test('backoff: the base, doubled after each failure, capped', () => {
  expect([1, 2, 3, 4, 5].map((attempt) => backoff(attempt, 100, 1000))).toEqual([100, 200, 400, 800, 1000]);
  expect(backoff(0, 100, 1000)).toBe(100);
});

test('a wake ends the sleep under way; a wake with nobody asleep ends the next sleep until cleared', async () => {
  const pause = sleeper();
  const sleeping = pause.sleep(LONG);
  pause.wake();
  await sleeping;
  // The wake is still news for the next sleep: the loop looked for work before it came.
  await pause.sleep(LONG);
  pause.clear();
  const next = pause.sleep(LONG);
  pause.wake();
  await next;
  pause.stop();
});

test('stop ends the sleeps under way and every later one', async () => {
  const pause = sleeper();
  const sleeping = [pause.sleep(LONG), pause.sleep(LONG)];
  expect(pause.stopped).toBe(false);
  pause.stop();
  await Promise.all(sleeping);
  pause.clear();
  await pause.sleep(LONG);
  expect(pause.stopped).toBe(true);
});

test('a sleep nobody ends lasts its time', async () => {
  const started = Date.now();
  await sleeper().sleep(20);
  expect(Date.now() - started).toBeGreaterThanOrEqual(15);
});

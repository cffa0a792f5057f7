import path from 'node:path';
import { startWorkerPool, WorkerJobError, WorkerLimitError, type WorkerPool } from '../src/worker-pool.ts';
import type { PoolTestJob } from './pool-worker.ts';

let pool: WorkerPool<PoolTestJob, string>;
beforeEach(() => {
  pool = startWorkerPool<PoolTestJob, string>({
    file: path.join(__dirname, 'pool-worker.ts'),
    name: 'test pool',
    threads: 1,
    timeLimitMs: 2000,
    memoryLimitMb: 64,
    maxWaiting: 2,
    setup: { greeting: 'hello' },
  });
});
afterEach(() => pool.stop());

const limit = (what: string) => expect.objectContaining({ name: 'WorkerLimitError', limit: what });

test('answers a job with its setup; a thrown error comes back as WorkerJobError with its name and message', async () => {
  expect(await pool.run({ echo: 'world' })).toBe('hello world');
  const failed = pool.run({ fail: 'no such thing' });
  await expect(failed).rejects.toBeInstanceOf(WorkerJobError);
  await expect(failed).rejects.toMatchObject({ name: 'RangeError', message: 'no such thing' });
  expect(await pool.run({ echo: 'again' })).toBe('hello again');
});

test('a job past its time is ended with its thread; the next job gets a new one', async () => {
  const started = Date.now();
  await expect(pool.run({ spin: true }, { timeLimitMs: 300 })).rejects.toEqual(limit('time'));
  expect(Date.now() - started).toBeLessThan(1500);
  expect(await pool.run({ echo: 'after' })).toBe('hello after');
});

test('a job past its memory is ended: heap (V8 limit) and array buffers (read while it works)', async () => {
  await expect(pool.run({ heap: true })).rejects.toEqual(limit('memory'));
  await expect(pool.run({ buffers: true })).rejects.toEqual(limit('memory'));
  expect(await pool.run({ echo: 'alive' })).toBe('hello alive');
});

test('more jobs than threads and queue is busy at once; a deadline ends a waiting or running job', async () => {
  const running = pool.run({ spin: true }, { timeLimitMs: 1000 });
  const waiting = [pool.run({ echo: 'a' }), pool.run({ echo: 'b' })];
  await expect(pool.run({ echo: 'c' })).rejects.toEqual(limit('busy'));
  await expect(running).rejects.toEqual(limit('time'));
  expect(await Promise.all(waiting)).toEqual(['hello a', 'hello b']);

  const cut = pool.run({ spin: true }, { deadline: Date.now() + 200 });
  const late = pool.run({ echo: 'late' }, { deadline: Date.now() + 100 });
  await expect(cut).rejects.toEqual(limit('deadline'));
  await expect(late).rejects.toEqual(limit('deadline'));
  expect(WorkerLimitError.name).toBe('WorkerLimitError');
});

test('stop fails what waits and refuses what comes', async () => {
  const outcomes = Promise.allSettled([pool.run({ spin: true }), pool.run({ echo: 'x' })]);
  await pool.stop();
  expect(await outcomes).toEqual([
    { status: 'rejected', reason: limit('busy') },
    { status: 'rejected', reason: limit('busy') },
  ]);
  await expect(pool.run({ echo: 'y' })).rejects.toEqual(limit('busy'));
});

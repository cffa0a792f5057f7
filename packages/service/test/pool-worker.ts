// The worker of worker-pool.test.ts: a job names what it does, so a test can make it pass each limit.
import { serveJobs } from '../src/worker-pool.ts';

export type PoolTestJob = { echo: string } | { fail: string } | { spin: true } | { heap: true } | { buffers: true };

const kept: unknown[] = [];

serveJobs<PoolTestJob, string, { greeting: string }>((job, setup) => {
  if ('echo' in job) return `${setup.greeting} ${job.echo}`;
  if ('fail' in job) throw new RangeError(job.fail);
  if ('spin' in job) for (;;);
  if ('heap' in job) for (;;) kept.push({ filler: 'x'.repeat(64) + kept.length });
  for (;;) kept.push(new Uint8Array(16 * 1024 * 1024).fill(1));
});

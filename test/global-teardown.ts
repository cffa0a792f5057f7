import { removeRun } from '@kn/testing';

/**
 * Fails the run when any test file left something of this run on the machine's servers: streams,
 * consumers or buckets on NATS, databases on Postgres. They are removed here, so the next run
 * starts clean, but the run that left them fails: a test that leaks, leaks on every run.
 */
export default async function globalTeardown() {
  const runId = process.env.KN_TEST_RUN;
  if (!runId) throw new Error('KN_TEST_RUN is not set: test/global-setup.ts did not run');
  const left = await removeRun(runId, process.env.NATS_URL);
  if (left.length) throw new Error(`the test run left behind (removed now):\n  ${left.join('\n  ')}`);
}

import { removeRun } from '@kn/testing';
import { undeclaredAnswers } from './answers.ts';

/**
 * Fails the run when any test file left something of this run on the machine's servers: streams,
 * consumers or buckets on NATS, databases on Postgres. They are removed here, so the next run
 * starts clean, but the run that left them fails: a test that leaks, leaks on every run. Fails it
 * too when the gateway answered a status its operation does not declare (test/answers.ts).
 */
export default async function globalTeardown() {
  const runId = process.env.KN_TEST_RUN;
  if (!runId) throw new Error('KN_TEST_RUN is not set: test/global-setup.ts did not run');
  const left = await removeRun(runId);
  const undeclared = undeclaredAnswers(runId);
  const problems = [
    ...(left.length ? [`the test run left behind (removed now):\n  ${left.join('\n  ')}`] : []),
    ...(undeclared.length
      ? [`the gateway answered statuses their operations do not declare (http.answers in @kn/contracts):\n  ${undeclared.join('\n  ')}`]
      : []),
  ];
  if (problems.length) throw new Error(problems.join('\n'));
}

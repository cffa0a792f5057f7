import { check, type FaultySystem, inject, people, schedule, startFaultySystem, workload } from './faults.ts';

/**
 * The short version of `pnpm bench:faults`: while four people work for about 45 s, every process
 * is killed once with SIGKILL, NATS is killed and restarted, and every Postgres connection is cut.
 * Afterwards every operation the API acknowledged is in every service exactly once.
 */
let system: FaultySystem;
beforeAll(async () => {
  system = await startFaultySystem();
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

test('nothing acknowledged is lost or duplicated when processes, NATS and Postgres fail', async () => {
  const { admin, actors } = await people(system.api, 4);
  const faults = schedule({ everyMs: 5_000, rounds: 1, postgres: 'cut' });
  const [ack, log] = await Promise.all([
    workload(actors, { ms: faults.length * 5_000 + 5_000, workers: 6, run: Math.random().toString(36).slice(2, 8) }),
    inject(system, faults),
  ]);
  const findings = await check(system, admin, actors, ack);
  const summary = {
    faults: log,
    acknowledged: { questions: ack.questions.size, solutions: ack.solutions.size, answersLost: ack.answersLost },
    checked: findings.checked,
  };
  expect({ ...summary, rejected: ack.rejected, crashes: system.crashes, differences: findings.differences }).toEqual({
    ...summary,
    rejected: [],
    crashes: [],
    differences: [],
  });
  expect(ack.questions.size).toBeGreaterThan(10);
  expect(ack.solutions.size).toBeGreaterThan(5);
  expect(log).toHaveLength(8);
}, 300_000);
